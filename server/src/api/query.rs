//! A query-string extractor whose failures are problem details naming the parameter at fault
//! (`?limit=abc` → 400, `parameter: "limit"`), as the other parameter checks answer. axum's own
//! `Query` rejects with a plain "Failed to deserialize query string" naming nothing. A
//! parameter with an empty value counts as absent.

use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// The query string of a request, deserialized into `T`.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        // An empty value is no value (`?kind=&limit=`: what an HTML form sends for fields left
        // blank), so it means the parameter's default rather than an invalid filter.
        let query: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(
                form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes())
                    .filter(|(_, value)| !value.is_empty()),
            )
            .finish();
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(ApiQuery)
            .map_err(|e| {
                let parameter = e.path().to_string();
                let parameter = if parameter == "." {
                    String::new()
                } else {
                    parameter
                };
                ApiError::BadParameter {
                    detail: format!("`{parameter}`: {}", e.into_inner()),
                    parameter,
                }
            })
    }
}
