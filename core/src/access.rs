//! Token scopes: what a project API token may do. Shared by the server (which checks them) and
//! the CLI (which asks for them), so both spell them the same way.

use serde::{Deserialize, Serialize};

/// What a project token may do; each scope includes the ones before it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Read a private project.
    Read,
    /// Read, and upload runs.
    Upload,
    /// Upload, plus alert triage and project settings.
    Write,
}

impl Scope {
    /// Every scope, weakest first.
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Upload, Scope::Write];

    /// `read`, `upload` or `write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Upload => "upload",
            Scope::Write => "write",
        }
    }

    /// Parses `read`, `upload` or `write`.
    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_ordered_and_round_trip() {
        assert!(Scope::Read < Scope::Upload && Scope::Upload < Scope::Write);
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(Scope::parse("admin"), None);
    }
}
