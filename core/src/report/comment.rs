//! The one sticky pull-request (or merge-request) comment of a project: how it is recognised,
//! how each suite of the project keeps its own section in it, and whether an invocation
//! creates it, updates it or leaves it alone.
//!
//! Every CI invocation is a fresh process with no local state, so the comment is found again
//! by a hidden marker, `<!-- benchtrail:comment project=P -->`, on its first line. Each suite
//! writes its report between `<!-- benchtrail:suite S -->` and `<!-- benchtrail:end S -->`;
//! the other suites' sections are kept as they are, sorted by suite name, so two suites of one
//! project share one comment and never open a second. The body always names the head commit
//! (the report's headline does), so a clean push turns an alarm into "no regressions at
//! `<sha>`" instead of leaving it stale; an identical body is not edited.
//!
//! Pure: the forge clients (the CLI's and the server's) list the comments, call [`plan`] and
//! carry out its [`CommentAction`].

use super::verdict::VerdictLevel;

/// GitHub refuses issue-comment bodies longer than this (characters).
pub const GITHUB_BODY_LIMIT: usize = 65_536;

/// GitLab's limit on a note's body (characters).
pub const GITLAB_BODY_LIMIT: usize = 1_000_000;

/// A comment as the forge lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExistingComment {
    /// The forge's id of the comment (GitHub comment id, GitLab note id), as text.
    pub id: String,
    /// Its body as stored.
    pub body: String,
}

/// What to do with the project's comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentAction {
    /// No comment exists: post this body.
    Create {
        /// The whole body, marker first.
        body: String,
    },
    /// The comment `id` exists and its body changes.
    Update {
        /// The comment's id.
        id: String,
        /// The new whole body.
        body: String,
    },
    /// The comment `id` already says exactly this: no request.
    Unchanged {
        /// The comment's id.
        id: String,
    },
    /// No comment exists and the verdict passes (and `always` was not asked): nothing to say.
    Skip,
}

/// What one invocation reports into the comment.
#[derive(Debug, Clone, Copy)]
pub struct CommentRequest<'a> {
    /// Project slug: the comment's key.
    pub project: &'a str,
    /// Suite name: the section's key within the comment.
    pub suite: &'a str,
    /// The verdict of this suite's report.
    pub level: VerdictLevel,
    /// Post a comment even when there is none and the verdict passes.
    pub always: bool,
    /// The forge's body limit, e.g. [`GITHUB_BODY_LIMIT`].
    pub limit: usize,
}

/// The hidden first line that marks the comment of `project`.
pub fn marker(project: &str) -> String {
    format!("<!-- benchtrail:comment project={} -->", clean(project))
}

/// The first comment of `comments` (in the forge's order, oldest first) that carries the
/// marker of `project`.
pub fn find<'a>(comments: &'a [ExistingComment], project: &str) -> Option<&'a ExistingComment> {
    let m = marker(project);
    comments
        .iter()
        .find(|c| c.body.lines().next() == Some(m.as_str()))
}

/// The suites' sections of a body made by [`compose`]: `(suite, report)` in body order.
/// Text outside the markers (a person's edit) is not kept.
pub fn sections(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find(BEGIN) {
        let after = &rest[start + BEGIN.len()..];
        let Some(close) = after.find(" -->\n") else {
            break;
        };
        let suite = after[..close].to_string();
        let text_start = close + " -->\n".len();
        let end = end_marker(&suite);
        let Some(len) = after[text_start..].find(&end) else {
            break;
        };
        out.push((suite, after[text_start..text_start + len].to_string()));
        rest = &after[text_start + len + end.len()..];
    }
    out
}

/// The body of `project`'s comment holding `sections` (`(suite, report)`), sorted by suite.
pub fn compose(project: &str, sections: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = sections.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut body = format!("{}\n", marker(project));
    for (suite, text) in sorted {
        body.push_str(&wrap(suite, text));
    }
    body
}

/// Decides what to do with `project`'s comment, given the comment found ([`find`]), if any.
/// `render(budget)` writes this suite's report in at most `budget` characters (e.g.
/// [`super::render::render_report`] with that limit); the budget is the forge's limit minus
/// the marker and the other suites' sections.
pub fn plan(
    existing: Option<&ExistingComment>,
    req: CommentRequest<'_>,
    render: impl FnOnce(usize) -> String,
) -> CommentAction {
    if existing.is_none() && req.level == VerdictLevel::Pass && !req.always {
        return CommentAction::Skip;
    }
    let suite = clean(req.suite);
    let mut kept: Vec<(String, String)> = existing
        .map(|c| sections(&c.body))
        .unwrap_or_default()
        .into_iter()
        .filter(|(s, _)| *s != suite)
        .collect();
    // The markers around a report that ends with its newline, as every rendered report does.
    let markers = wrap(&suite, "\n").chars().count() - 1;
    let overhead = compose(req.project, &kept).chars().count() + markers;
    let text = render(req.limit.saturating_sub(overhead));
    kept.push((suite, text));
    let body = compose(req.project, &kept);
    match existing {
        Some(c) if c.body == body => CommentAction::Unchanged { id: c.id.clone() },
        Some(c) => CommentAction::Update {
            id: c.id.clone(),
            body,
        },
        None => CommentAction::Create { body },
    }
}

/// The headers of a forge's answer that say when to try again.
#[derive(Debug, Clone, Copy, Default)]
pub struct RetryHeaders<'a> {
    /// `Retry-After` (seconds).
    pub retry_after: Option<&'a str>,
    /// `x-ratelimit-remaining`.
    pub remaining: Option<&'a str>,
    /// `x-ratelimit-reset` (Unix seconds).
    pub reset: Option<&'a str>,
}

/// Seconds to wait before try `attempt + 1` (1-based) of a forge request answered `status`,
/// or `None` when the answer is final. Retried: 5xx, 429, and a 403 that is a rate limit
/// (GitHub's primary limit: `x-ratelimit-remaining: 0`; its secondary limit: a
/// `Retry-After`). The wait: `Retry-After`, else until `x-ratelimit-reset` (+1 s; `now` is
/// Unix seconds) when no requests remain, else 1, 2, 4, ... s. Shared by the CLI's and the
/// server's forge clients.
pub fn retry_wait(status: u16, h: RetryHeaders<'_>, attempt: u32, now: u64) -> Option<u64> {
    let rate_limited = h.remaining.map(str::trim) == Some("0");
    let retry_after = h.retry_after.and_then(|v| v.trim().parse::<u64>().ok());
    let transient = status >= 500
        || status == 429
        || (status == 403 && (rate_limited || retry_after.is_some()));
    if !transient {
        return None;
    }
    if let Some(s) = retry_after {
        return Some(s);
    }
    if rate_limited {
        if let Some(reset) = h.reset.and_then(|v| v.trim().parse::<u64>().ok()) {
            return Some(reset.saturating_sub(now) + 1);
        }
    }
    Some(1 << attempt.saturating_sub(1).min(6))
}

/// The `rel="next"` target of a `Link` header (RFC 8288), as GitHub paginates its lists.
pub fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        is_next.then(|| {
            target
                .trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

/// The message of a forge's error body: GitHub and GitLab both answer `{"message": ...}`
/// (a string, or for GitLab sometimes an object, shown as JSON); any other body as it came.
pub fn forge_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("message")
                .map(|m| m.as_str().map_or(m.to_string(), str::to_string))
        })
        .unwrap_or_else(|| body.to_string())
}

const BEGIN: &str = "<!-- benchtrail:suite ";

fn end_marker(suite: &str) -> String {
    format!("<!-- benchtrail:end {suite} -->\n")
}

fn wrap(suite: &str, text: &str) -> String {
    let mut t = text.to_string();
    if !t.ends_with('\n') {
        t.push('\n');
    }
    format!("{BEGIN}{suite} -->\n{t}{}", end_marker(suite))
}

/// A name safe inside an HTML comment on one line: no `--`, `<`, `>`, spaces or line breaks
/// (each becomes `_`; a slug such as `llm-serving` is kept as it is).
fn clean(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let bad = matches!(c, '<' | '>' | ' ' | '\n' | '\r') || (c == '-' && out.ends_with('-'));
        out.push(if bad { '_' } else { c });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(suite: &str, level: VerdictLevel) -> CommentRequest<'_> {
        CommentRequest {
            project: "llm-serving",
            suite,
            level,
            always: false,
            limit: GITHUB_BODY_LIMIT,
        }
    }

    #[test]
    fn the_next_page_is_read_from_the_link_header() {
        let h = "<https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=2>; rel=\"next\", \
                 <https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=3>; rel=\"last\"";
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=2")
        );
        assert_eq!(next_link("<https://x/?page=1>; rel=\"prev\""), None);
    }

    #[test]
    fn a_forge_message_is_its_json_message_else_the_body() {
        assert_eq!(forge_message(r#"{"message": "Not Found"}"#), "Not Found");
        assert_eq!(
            forge_message(r#"{"message": {"body": ["too long"]}}"#),
            r#"{"body":["too long"]}"#
        );
        assert_eq!(forge_message("Bad Gateway"), "Bad Gateway");
    }

    #[test]
    fn a_passing_first_report_posts_nothing_unless_asked() {
        assert_eq!(
            plan(None, req("nightly", VerdictLevel::Pass), |_| "ok".into()),
            CommentAction::Skip
        );
        let always = CommentRequest {
            always: true,
            ..req("nightly", VerdictLevel::Pass)
        };
        assert_eq!(
            plan(None, always, |_| "ok".into()),
            CommentAction::Create {
                body: "<!-- benchtrail:comment project=llm-serving -->\n\
                       <!-- benchtrail:suite nightly -->\nok\n<!-- benchtrail:end nightly -->\n"
                    .into()
            }
        );
    }

    #[test]
    fn a_second_suite_adds_a_section_and_a_rerun_changes_nothing() {
        let CommentAction::Create { body } =
            plan(None, req("sharegpt", VerdictLevel::Fail), |_| {
                "FAIL a\n".into()
            })
        else {
            panic!()
        };
        let first = ExistingComment {
            id: "7".into(),
            body,
        };
        let CommentAction::Update { id, body } =
            plan(Some(&first), req("random", VerdictLevel::Pass), |_| {
                "PASS b\n".into()
            })
        else {
            panic!()
        };
        assert_eq!(id, "7");
        assert_eq!(
            sections(&body),
            vec![
                ("random".to_string(), "PASS b\n".to_string()),
                ("sharegpt".to_string(), "FAIL a\n".to_string())
            ]
        );
        let second = ExistingComment {
            id: "7".into(),
            body,
        };
        assert_eq!(
            plan(Some(&second), req("sharegpt", VerdictLevel::Fail), |_| {
                "FAIL a\n".into()
            }),
            CommentAction::Unchanged { id: "7".into() }
        );
        assert_eq!(
            find(&[first.clone(), second.clone()], "llm-serving"),
            Some(&first)
        );
        assert_eq!(find(&[second], "other"), None);
    }

    #[test]
    fn the_budget_leaves_room_for_the_marker_and_the_other_suites() {
        let other = ExistingComment {
            id: "1".into(),
            body: compose("p", &[("a".into(), "x".repeat(1000))]),
        };
        let request = CommentRequest {
            limit: 5000,
            ..req("b", VerdictLevel::Fail)
        };
        let request = CommentRequest {
            project: "p",
            ..request
        };
        let mut budget = 0;
        let CommentAction::Update { body, .. } = plan(Some(&other), request, |b| {
            budget = b;
            format!("{}\n", "y".repeat(b - 1))
        }) else {
            panic!()
        };
        assert_eq!(body.chars().count(), 5000);
        let markers = "<!-- benchtrail:suite b -->\n<!-- benchtrail:end b -->\n".len();
        assert_eq!(budget, 5000 - other.body.len() - markers);
    }
}
