//! The robustness harness of the adapter tests: random bytes, truncations and mutations of real
//! files, and every input must give `Ok` or `Err`, never a panic, read through `parse_file` (a
//! file on its own) or `read_files` (a file with the other files of its upload, so that a
//! summary's companion parser runs).
//!
//! proptest generates the inputs from a fixed seed and a modest case count: every run tries
//! the same inputs, in bounded time. What it generates are edits (cut points, byte positions,
//! JSON pointers), not texts, so a failure is shrunk to a few edits and names its seed. A
//! file no longer than the truncation count is cut at every length instead of at sampled
//! points. No failure file is written (`failure_persistence: None`): the seed reproduces.

#![allow(dead_code)]

use benchtrail_core::adapters::{parse_file, read_files, FileSpec};
use benchtrail_core::{lenient_json, lenient_yaml};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// How a file is written: its structural mutations are written back the same way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Syntax {
    /// A JSON document or JSON Lines (Python's `NaN`/`Infinity` allowed).
    Json,
    /// A YAML document (guidellm's `benchmarks.yaml`).
    Yaml,
    /// Text, mutated line by line (a console summary).
    Text,
}

/// A real file under test, and how its variants are read.
pub struct Subject {
    /// Name, format and text of each file of the upload (one file when read alone).
    files: Vec<(String, &'static str, String)>,
    /// The file whose variants are read.
    which: usize,
    /// `Some`: read alone through `parse_file`, once per format (`None`: detected). `None`:
    /// read through `read_files` with the other files, every file detected, then every file
    /// named with its format.
    alone: Option<Vec<Option<&'static str>>>,
    syntax: Syntax,
}

/// As the truncation count: cut the file at every length.
pub const EVERY_LENGTH: u32 = u32::MAX;

/// Random texts start with one of these (or nothing), to get past the first checks.
const PREFIXES: &[&str] = &[
    "",
    "{",
    "[",
    "{\"benchmark\": {",
    "============ Serving Benchmark Result ============\n",
    "benchmarks:\n- ",
];

/// Bytes that matter to JSON, YAML and the console parsers.
const SPECIALS: &[u8] = b"{}[]\":,0-.eE \n\tNaI-#&*!|>'";

/// Values a structural mutation puts in place of a value.
fn replacement(op: u8, old: &Value) -> Value {
    match op {
        0 => Value::String(old.to_string()),
        1 => Value::Null,
        2 => "abc".into(),
        3 => (-1.5).into(),
        4 => 1e300.into(),
        5 => Value::Array(Vec::new()),
        6 => Value::Object(Default::default()),
        7 => u64::MAX.into(),
        8 => 0.into(),
        9 => true.into(),
        10 => "NaN".into(),
        _ => "-Infinity".into(),
    }
}

/// Number of structural operations: delete, then each [`replacement`].
const STRUCTURAL_OPS: u8 = 13;

/// Values a line mutation puts after a console line's colon.
const LINE_VALUES: &[&str] = &[
    "abc",
    "-3",
    "1e309",
    "",
    "inf",
    "NaN",
    "18446744073709551616",
];

#[derive(Clone, Debug)]
enum ByteEdit {
    /// Flip one bit of the byte at the position.
    Flip(Index, u8),
    /// Put one of [`SPECIALS`] there.
    Special(Index, Index),
    /// Put any byte there.
    Byte(Index, u8),
}

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    prop_oneof![
        (any::<Index>(), 0u8..8).prop_map(|(at, bit)| ByteEdit::Flip(at, bit)),
        (any::<Index>(), any::<Index>()).prop_map(|(at, which)| ByteEdit::Special(at, which)),
        (any::<Index>(), any::<u8>()).prop_map(|(at, b)| ByteEdit::Byte(at, b)),
    ]
}

/// A random byte: any, ASCII, or one that matters to the parsers.
fn random_byte() -> impl Strategy<Value = u8> {
    prop_oneof![any::<u8>(), 0u8..0x80, select(SPECIALS)]
}

fn config(seed: u64, cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_iters: 1024,
        ..Config::default()
    }
}

fn excerpt(text: &str) -> String {
    text.chars().take(300).collect()
}

impl Subject {
    /// A file read alone through `parse_file`, once per entry of `formats` (`None`: detected).
    pub fn alone(text: &str, syntax: Syntax, formats: &[Option<&'static str>]) -> Subject {
        Subject {
            files: vec![(String::new(), "", text.to_string())],
            which: 0,
            alone: Some(formats.to_vec()),
            syntax,
        }
    }

    /// `files[which]` of an upload (name, format, text), read through `read_files` with the
    /// other files: every file detected, then every file named with its format.
    pub fn in_upload(
        files: &[(&str, &'static str, String)],
        which: usize,
        syntax: Syntax,
    ) -> Subject {
        Subject {
            files: files
                .iter()
                .map(|(name, format, text)| (name.to_string(), *format, text.clone()))
                .collect(),
            which,
            alone: None,
            syntax,
        }
    }

    fn text(&self) -> &str {
        &self.files[self.which].2
    }

    fn what(&self) -> String {
        match &self.alone {
            Some(formats) => format!("parse_file as {formats:?}"),
            None => format!(
                "read_files of {:?} (the {})",
                self.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
                self.files[self.which].1
            ),
        }
    }

    /// Reads `input` in place of the subject's text, every way the subject is read; the
    /// results are ignored, a panic propagates.
    pub fn read(&self, input: &str) {
        match &self.alone {
            Some(formats) => {
                for format in formats {
                    let _ = parse_file(*format, input, 0);
                }
            }
            None => {
                for named in [false, true] {
                    let specs: Vec<FileSpec> = self
                        .files
                        .iter()
                        .enumerate()
                        .map(|(i, (name, format, text))| FileSpec {
                            name,
                            format: named.then_some(*format),
                            text: if i == self.which { input } else { text },
                        })
                        .collect();
                    let _ = read_files(&specs);
                }
            }
        }
    }

    /// [`Subject::read`], a panic failing the test with the input's description.
    fn read_or_fail(&self, input: &str, what: &str) -> Result<(), TestCaseError> {
        catch_unwind(AssertUnwindSafe(|| self.read(input))).map_err(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            TestCaseError::fail(format!(
                "{} panicked on {what}: {message}; input starts {:?}",
                self.what(),
                excerpt(input)
            ))
        })
    }

    /// Runs `cases` inputs made by `make` (the input and what was done) from values of
    /// `strategy`, from `seed`.
    fn run<S: Strategy>(
        &self,
        kind: &str,
        seed: u64,
        cases: u32,
        strategy: S,
        make: impl Fn(&S::Value) -> (String, String),
    ) {
        let mut runner = TestRunner::new(config(seed, cases));
        if let Err(e) = runner.run(&strategy, |value| {
            let (input, what) = make(&value);
            self.read_or_fail(&input, &format!("{kind} {what}"))
        }) {
            panic!("{kind} (seed {seed}) of {}: {e}", self.what());
        }
    }

    /// Random texts (lossy UTF-8 of random bytes, up to 400, after one of [`PREFIXES`]) in
    /// place of the file.
    pub fn random_bytes(&self, seed: u64, cases: u32) {
        self.run(
            "random bytes",
            seed,
            cases,
            (select(PREFIXES), vec(random_byte(), 0..400)),
            |(prefix, bytes)| {
                let text = format!("{prefix}{}", String::from_utf8_lossy(bytes));
                (text, String::new())
            },
        );
    }

    /// The file cut at `cases` points (bytes; a cut inside a character is read lossily), or
    /// at every length when it is no longer than that.
    pub fn truncations(&self, seed: u64, cases: u32) {
        let bytes = self.text().as_bytes();
        if bytes.len() < cases as usize {
            for len in 0..=bytes.len() {
                let cut = String::from_utf8_lossy(&bytes[..len]);
                if let Err(e) = self.read_or_fail(&cut, &format!("the first {len} bytes")) {
                    panic!("{e}");
                }
            }
            return;
        }
        self.run("truncation", seed, cases, 0..=bytes.len(), |len| {
            let cut = String::from_utf8_lossy(&bytes[..*len]).into_owned();
            (cut, format!("to {len} bytes"))
        });
    }

    /// Every kind, with the counts of a file read with its upload: 50 random texts, 60
    /// truncations, 30 structural (or line) mutations and 30 byte mutations.
    pub fn all_kinds(&self, seed: u64) {
        self.random_bytes(seed, 50);
        self.truncations(seed, 60);
        self.mutations(seed, 30);
        self.byte_mutations(seed, 30);
    }

    /// One to four bytes of the file flipped or replaced.
    pub fn byte_mutations(&self, seed: u64, cases: u32) {
        let text = self.text();
        if text.is_empty() {
            return;
        }
        self.run(
            "byte mutation",
            seed,
            cases,
            vec(byte_edit(), 1..=4),
            |edits| {
                let mut bytes = text.as_bytes().to_vec();
                let mut done = Vec::new();
                for edit in edits {
                    let (at, byte) = match edit {
                        ByteEdit::Flip(at, bit) => {
                            let at = at.index(text.len());
                            (at, bytes[at] ^ (1 << bit))
                        }
                        ByteEdit::Special(at, which) => {
                            (at.index(text.len()), SPECIALS[which.index(SPECIALS.len())])
                        }
                        ByteEdit::Byte(at, b) => (at.index(text.len()), *b),
                    };
                    bytes[at] = byte;
                    done.push(format!("byte {at} = {byte:#04x}"));
                }
                (
                    String::from_utf8_lossy(&bytes).into_owned(),
                    done.join(", "),
                )
            },
        );
    }

    /// One to three edits of the file's structure: for JSON and YAML a value deleted or
    /// replaced (by its own text as a string, null, text, a negative, a huge number, an empty
    /// list or object, `u64::MAX`, 0, true, `"NaN"`, `"-Infinity"`), written back the same
    /// way (JSON Lines when the file has several records, ending in a newline only when the
    /// file does); for text a line deleted or duplicated, or the value after its colon replaced.
    pub fn mutations(&self, seed: u64, cases: u32) {
        match self.syntax {
            Syntax::Json | Syntax::Yaml => self.structural_mutations(seed, cases),
            Syntax::Text => self.line_mutations(seed, cases),
        }
    }

    fn structural_mutations(&self, seed: u64, cases: u32) {
        let records: Vec<Value> = match self.syntax {
            Syntax::Yaml => vec![lenient_yaml::parse_value(self.text()).expect("a YAML sample")],
            _ => lenient_json::parse_values(self.text()).expect("a JSON sample"),
        };
        let mut all: Vec<(usize, String)> = Vec::new();
        for (i, v) in records.iter().enumerate() {
            let mut ps = Vec::new();
            pointers(v, String::new(), &mut ps);
            all.extend(ps.into_iter().map(|p| (i, p)));
        }
        let syntax = self.syntax;
        // JSON Lines keep their last newline, or its absence (vLLM's `--append-result`).
        let last_newline = if self.text().ends_with('\n') {
            "\n"
        } else {
            ""
        };
        self.run(
            "structural mutation",
            seed,
            cases,
            vec((any::<Index>(), 0..STRUCTURAL_OPS), 1..=3),
            |edits| {
                let mut values = records.clone();
                let mut done = Vec::new();
                for (at, op) in edits {
                    let (record, pointer) = &all[at.index(all.len())];
                    edit(&mut values[*record], pointer, *op);
                    done.push(format!("record {record} {pointer:?} op {op}"));
                }
                let text = match syntax {
                    Syntax::Yaml => yaml_serde::to_string(&values[0]).unwrap(),
                    _ if values.len() == 1 => values[0].to_string(),
                    _ => {
                        let lines: Vec<String> = values.iter().map(Value::to_string).collect();
                        lines.join("\n") + last_newline
                    }
                };
                (text, done.join(", "))
            },
        );
    }

    fn line_mutations(&self, seed: u64, cases: u32) {
        let lines: Vec<&str> = self.text().lines().collect();
        if lines.is_empty() {
            return;
        }
        self.run(
            "line mutation",
            seed,
            cases,
            vec((any::<Index>(), 0u8..3, select(LINE_VALUES)), 1..=3),
            |edits| {
                let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                let mut done = Vec::new();
                for (at, op, value) in edits {
                    if out.is_empty() {
                        break;
                    }
                    let at = at.index(out.len());
                    done.push(format!("line {at} op {op}"));
                    match op {
                        0 => {
                            out.remove(at);
                        }
                        1 => out.insert(at, out[at].clone()),
                        _ => {
                            if let Some((label, _)) = out[at].clone().split_once(':') {
                                out[at] = format!("{label}: {value}");
                            }
                        }
                    }
                }
                (out.join("\n"), done.join(", "))
            },
        );
    }
}

/// Every JSON pointer in `v` (the root's is empty).
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                pointers(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// Applies structural operation `op` at `pointer` (nothing when an earlier edit removed it).
fn edit(root: &mut Value, pointer: &str, op: u8) {
    if op == 0 {
        let Some((parent, key)) = pointer.rsplit_once('/') else {
            return;
        };
        let key = key.replace("~1", "/").replace("~0", "~");
        match root.pointer_mut(parent) {
            Some(Value::Object(m)) => {
                m.remove(&key);
            }
            Some(Value::Array(a)) => {
                if let Ok(i) = key.parse::<usize>() {
                    if i < a.len() {
                        a.remove(i);
                    }
                }
            }
            _ => {}
        }
    } else if let Some(target) = root.pointer_mut(pointer) {
        *target = replacement(op - 1, target);
    }
}
