//! Signing in as a browser does, by hand: `GET /sign-in` for the form and its double-submit
//! cookie, `POST /sign-in` with the token, and the session cookie read from `Set-Cookie`; then
//! pages fetched and forms posted with that cookie. No redirects are followed and no cookie
//! jar is used, so every header can be asserted exactly.

use super::server::TestServer;

/// A client that follows no redirects.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The `value` of the first `<input … name="{name}" value="…">` in `html`.
pub fn input_value(html: &str, name: &str) -> Option<String> {
    let at = html.find(&format!("name=\"{name}\" value=\""))?;
    let start = at + format!("name=\"{name}\" value=\"").len();
    let end = start + html[start..].find('"')?;
    Some(html[start..end].to_string())
}

/// Every `Set-Cookie` header of `r`, in order.
pub fn set_cookies(r: &reqwest::Response) -> Vec<String> {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect()
}

/// The sign-in form: its double-submit cookie's whole `Set-Cookie`, and its token.
pub async fn sign_in_form(server: &TestServer) -> (String, String) {
    let r = client().get(server.url("/sign-in")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let cookie = set_cookies(&r)
        .into_iter()
        .next()
        .expect("the sign-in form sets its cookie");
    let html = r.text().await.unwrap();
    let csrf = input_value(&html, "csrf").expect("the form has a csrf field");
    (cookie, csrf)
}

/// Posts the sign-in form with `cookie` (`name=value`) and fields; returns the response.
pub async fn post_sign_in(
    server: &TestServer,
    cookie: Option<&str>,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client().post(server.url("/sign-in")).form(fields);
    if let Some(c) = cookie {
        request = request.header("cookie", c);
    }
    request.send().await.unwrap()
}

/// A signed-in browser: its session cookie (`benchtrail_session=…`).
#[derive(Debug, Clone)]
pub struct Session {
    /// `benchtrail_session=<id>`, as a `Cookie` header sends it.
    pub cookie: String,
    /// The session's whole `Set-Cookie` value at sign-in.
    pub set_cookie: String,
}

/// Signs in with `token` through the form; panics unless it succeeds (303).
pub async fn sign_in(server: &TestServer, token: &str) -> Session {
    let (form_cookie, csrf) = sign_in_form(server).await;
    let pair = form_cookie.split(';').next().unwrap().to_string();
    let r = post_sign_in(server, Some(&pair), &[("csrf", &csrf), ("token", token)]).await;
    assert_eq!(r.status(), 303, "signing in");
    let set_cookie = set_cookies(&r)
        .into_iter()
        .find(|c| c.starts_with("benchtrail_session="))
        .expect("a session cookie");
    Session {
        cookie: set_cookie.split(';').next().unwrap().to_string(),
        set_cookie,
    }
}

impl Session {
    /// GETs `path` with the session: status and body.
    pub async fn get(&self, server: &TestServer, path: &str) -> (u16, String) {
        let r = client()
            .get(server.url(path))
            .header("cookie", &self.cookie)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// The CSRF token the session's pages carry (from its sign-out form on `/`).
    pub async fn csrf(&self, server: &TestServer) -> String {
        let (status, html) = self.get(server, "/").await;
        assert_eq!(status, 200);
        input_value(&html, "csrf").expect("a signed-in page has the sign-out form")
    }

    /// POSTs form `fields` to `path` with the session; returns the response.
    pub async fn post(
        &self,
        server: &TestServer,
        path: &str,
        fields: &[(&str, &str)],
    ) -> reqwest::Response {
        client()
            .post(server.url(path))
            .header("cookie", &self.cookie)
            .form(fields)
            .send()
            .await
            .unwrap()
    }
}
