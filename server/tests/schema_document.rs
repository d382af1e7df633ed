//! `migrations/schema.md` names exactly the schema the migrations build. On every backend under
//! test (SQLite always, Postgres when `BENCHTRAIL_TEST_DATABASE_URL` is set), a freshly migrated
//! database has precisely the tables the document has a `` ## `table` `` section for, and each
//! of them precisely the columns listed in its section's Markdown table: a table or column
//! added by a migration and not documented fails this test, and so does a documented one that
//! no migration creates. `_sqlx_migrations` and SQLite's own `sqlite_*` tables are not part of
//! the schema. Only names are checked; types and meanings are for reviewers to keep right.

use crate::common;

use common::db::stores;
use sqlx::Row;
use std::collections::{BTreeMap, BTreeSet};

/// The document under test.
const SCHEMA_DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/schema.md");

/// Table name → its column names, in the order given.
type Schema = BTreeMap<String, Vec<String>>;

/// Reads a schema document: every `` ## `table_name` `` heading starts the section of that
/// table, which ends at the next heading of any level. In a section, every Markdown table row
/// whose first cell is `` `column_name` `` is a column of the table; the header row (first
/// cell `column`) and the separator row are skipped. Everything outside table sections is
/// prose and ignored.
///
/// # Errors
/// A message naming the line for a heading that starts like a table heading but is not one
/// exactly, a row in a section whose first cell is not a name in backticks, a table or column
/// given twice, or a section without columns.
fn parse_schema_doc(text: &str) -> Result<Schema, String> {
    let mut schema = Schema::new();
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.starts_with('#') {
            current = None;
            let Some(rest) = line.strip_prefix("## `") else {
                continue;
            };
            let name = rest
                .strip_suffix('`')
                .filter(|name| is_identifier(name))
                .ok_or_else(|| {
                    format!("line {n}: a table heading is \"## `table_name`\" alone, not {line:?}")
                })?;
            if schema.insert(name.to_string(), Vec::new()).is_some() {
                return Err(format!("line {n}: table `{name}` has a second section"));
            }
            current = Some(name.to_string());
            continue;
        }
        let (Some(table), Some(row)) = (&current, line.strip_prefix('|')) else {
            continue;
        };
        let first = row.split('|').next().unwrap_or_default().trim();
        if first == "column" || (!first.is_empty() && first.chars().all(|c| "-: ".contains(c))) {
            continue;
        }
        let column = first
            .strip_prefix('`')
            .and_then(|c| c.strip_suffix('`'))
            .filter(|c| is_identifier(c))
            .ok_or_else(|| {
                format!(
                    "line {n}: a row of table `{table}` starts with the column name in \
                     backticks, not {first:?}"
                )
            })?;
        let columns = schema
            .get_mut(table)
            .expect("the section's table is inserted");
        if columns.iter().any(|c| c == column) {
            return Err(format!(
                "line {n}: column `{table}.{column}` is listed twice"
            ));
        }
        columns.push(column.to_string());
    }
    match schema.iter().find(|(_, columns)| columns.is_empty()) {
        Some((table, _)) => Err(format!("the section of table `{table}` lists no columns")),
        None => Ok(schema),
    }
}

/// A plain SQL name: letters, digits and underscores.
fn is_identifier(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether a table belongs to the tools rather than to benchtrail's schema.
fn is_internal_table(name: &str) -> bool {
    name == "_sqlx_migrations" || name.starts_with("sqlite_")
}

/// The tables and columns of the database at `url` (`backend` is `sqlite` or `postgres`),
/// internal tables left out, columns in their declared order.
async fn actual_schema(backend: &str, url: &str) -> Result<Schema, sqlx::Error> {
    let sql = match backend {
        "sqlite" => {
            "SELECT m.name AS table_name, p.name AS column_name \
             FROM sqlite_master m, pragma_table_info(m.name) p \
             WHERE m.type = 'table' ORDER BY m.name, p.cid"
        }
        "postgres" => {
            "SELECT CAST(table_name AS TEXT) AS table_name, CAST(column_name AS TEXT) AS column_name \
             FROM information_schema.columns WHERE table_schema = current_schema() \
             ORDER BY table_name, ordinal_position"
        }
        other => panic!("no schema query for backend {other}"),
    };
    let pool = sqlx::AnyPool::connect(url).await?;
    let rows = sqlx::query(sql).fetch_all(&pool).await;
    pool.close().await;
    let mut schema = Schema::new();
    for row in rows? {
        let table: String = row.try_get("table_name")?;
        if !is_internal_table(&table) {
            schema
                .entry(table)
                .or_default()
                .push(row.try_get("column_name")?);
        }
    }
    Ok(schema)
}

/// Every difference between the `documented` and the `actual` schema of `backend`, one line
/// each, saying which table or column is missing from the document or from the database.
fn differences(backend: &str, documented: &Schema, actual: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    for table in actual.keys().filter(|t| !documented.contains_key(*t)) {
        out.push(format!(
            "{backend}: table `{table}` is missing from migrations/schema.md (columns: {})",
            actual[table].join(", ")
        ));
    }
    for table in documented.keys().filter(|t| !actual.contains_key(*t)) {
        out.push(format!(
            "{backend}: table `{table}` is in migrations/schema.md but missing from the database"
        ));
    }
    for (table, columns) in actual {
        let Some(doc_columns) = documented.get(table) else {
            continue;
        };
        let in_db: BTreeSet<&String> = columns.iter().collect();
        let in_doc: BTreeSet<&String> = doc_columns.iter().collect();
        for column in in_db.difference(&in_doc) {
            out.push(format!(
                "{backend}: column `{table}.{column}` is missing from migrations/schema.md"
            ));
        }
        for column in in_doc.difference(&in_db) {
            out.push(format!(
                "{backend}: column `{table}.{column}` is in migrations/schema.md but missing \
                 from the database"
            ));
        }
    }
    out
}

#[tokio::test]
async fn the_schema_document_lists_every_table_and_column_of_every_backend() {
    sqlx::any::install_default_drivers();
    let text =
        std::fs::read_to_string(SCHEMA_DOC).unwrap_or_else(|e| panic!("reading {SCHEMA_DOC}: {e}"));
    let documented =
        parse_schema_doc(&text).unwrap_or_else(|e| panic!("migrations/schema.md: {e}"));
    let mut problems = Vec::new();
    for db in stores().await {
        match actual_schema(db.name, &db.url).await {
            Ok(actual) if actual.is_empty() => {
                problems.push(format!("{}: the migrated database has no tables", db.name));
            }
            Ok(actual) => problems.extend(differences(db.name, &documented, &actual)),
            Err(e) => problems.push(format!("{}: reading the schema: {e}", db.name)),
        }
        db.cleanup().await;
    }
    assert!(
        problems.is_empty(),
        "migrations/schema.md does not match the migrated schema:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_parser_reads_table_sections_and_nothing_else() {
    let doc = "# Schema\n\
        \n\
        Intro prose with `code`, and a table that is not a schema table:\n\
        \n\
        | type | meaning |\n\
        |---|---|\n\
        | `TEXT` | text |\n\
        \n\
        ## `runs`\n\
        \n\
        A row is a run.\n\
        \n\
        | column | type | meaning |\n\
        |---|---|---|\n\
        | `seq` | INTEGER PK | upload order |\n\
        |  `id`  | TEXT NOT NULL | the run (uuid), with a \\| pipe |\n\
        \n\
        Index `runs_by_seq (seq)`.\n\
        \n\
        ## `settings`\n\
        \n\
        | column | type | meaning |\n\
        | :--- | --- | --- |\n\
        | `key` | TEXT PK | the key |\n\
        \n\
        ### Notes\n\
        \n\
        | `not_a_column` | x | after another heading |\n";
    let schema = parse_schema_doc(doc).unwrap();
    let expected: Schema = [
        (
            "runs".to_string(),
            vec!["seq".to_string(), "id".to_string()],
        ),
        ("settings".to_string(), vec!["key".to_string()]),
    ]
    .into_iter()
    .collect();
    assert_eq!(schema, expected);
}

#[test]
fn the_parser_refuses_malformed_sections() {
    let twice =
        "## `t`\n| column | type | meaning |\n|---|---|---|\n| `a` | T | x |\n| `a` | T | y |\n";
    assert_eq!(
        parse_schema_doc(twice).unwrap_err(),
        "line 5: column `t.a` is listed twice"
    );
    let bare = "## `t`\n| column | type | meaning |\n|---|---|---|\n| a | T | x |\n";
    assert!(
        parse_schema_doc(bare).unwrap_err().starts_with("line 4: "),
        "a column name without backticks"
    );
    let heading = "## `t` table\n";
    assert!(parse_schema_doc(heading)
        .unwrap_err()
        .starts_with("line 1: "));
    let empty = "## `t`\n\nNo table.\n";
    assert_eq!(
        parse_schema_doc(empty).unwrap_err(),
        "the section of table `t` lists no columns"
    );
    let again = "## `t`\n| `a` | T | x |\n## `t`\n| `b` | T | x |\n";
    assert_eq!(
        parse_schema_doc(again).unwrap_err(),
        "line 3: table `t` has a second section"
    );
}

#[test]
fn differences_name_what_is_missing_and_where() {
    let schema = |tables: &[(&str, &[&str])]| -> Schema {
        tables
            .iter()
            .map(|(t, cs)| (t.to_string(), cs.iter().map(|c| c.to_string()).collect()))
            .collect()
    };
    let documented = schema(&[("runs", &["seq", "id", "gone"]), ("old", &["x"])]);
    let actual = schema(&[("runs", &["id", "seq", "new"]), ("fresh", &["a", "b"])]);
    assert_eq!(
        differences("sqlite", &documented, &actual),
        [
            "sqlite: table `fresh` is missing from migrations/schema.md (columns: a, b)",
            "sqlite: table `old` is in migrations/schema.md but missing from the database",
            "sqlite: column `runs.new` is missing from migrations/schema.md",
            "sqlite: column `runs.gone` is in migrations/schema.md but missing from the database",
        ]
    );
    assert!(differences("postgres", &actual, &actual).is_empty());
}
