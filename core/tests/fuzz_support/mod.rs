//! Robustness checks shared by the AIPerf, GenAI-Perf, guidellm and LLMPerf adapter tests (no
//! extra dependency: a seeded xorshift PRNG). Every input must give `Ok` or `Err` from
//! `read_files`, never a panic.

use benchtrail_core::adapters::{read_files, FileSpec};

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Reads the files as one upload, the first detected or read as `format`; the result is ignored.
pub fn read_all(files: &[(&str, &str)], format: Option<&str>) {
    let specs: Vec<FileSpec> = files
        .iter()
        .enumerate()
        .map(|(i, (name, text))| FileSpec {
            name,
            format: if i == 0 { format } else { None },
            text,
        })
        .collect();
    let _ = read_files(&specs);
}

/// Random bytes, every stepped truncation of `files[which]`, and mutated copies of it
/// (numbers → strings, deleted keys, replaced values, flipped bytes), each read with the
/// other files.
pub fn hammer(files: &[(&str, String)], format: &str, which: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let with = |replacement: &str| {
        let list: Vec<(&str, &str)> = files
            .iter()
            .enumerate()
            .map(|(i, (n, t))| (*n, if i == which { replacement } else { t.as_str() }))
            .collect();
        read_all(&list, None);
        read_all(&list, Some(format));
    };
    for _ in 0..50 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        with(&String::from_utf8_lossy(&bytes));
    }
    let text = &files[which].1;
    let step = (text.len() / 60).max(1);
    let mut cut = 0;
    while cut < text.len() {
        if text.is_char_boundary(cut) {
            with(&text[..cut]);
        }
        cut += step;
    }
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // JSON Lines: mutate the first record only.
        Err(_) => serde_json::from_str(text.lines().next().unwrap_or("{}")).unwrap_or_default(),
    };
    for _ in 0..30 {
        let mut v = value.clone();
        for _ in 0..=rng.below(3) {
            mutate(&mut v, &mut rng);
        }
        with(&v.to_string());
    }
    for _ in 0..30 {
        let mut bytes = text.as_bytes().to_vec();
        for _ in 0..4 {
            let i = rng.below(bytes.len());
            if let Some(b) = bytes.get_mut(i) {
                *b ^= 1 << rng.below(8);
            }
        }
        with(&String::from_utf8_lossy(&bytes));
    }
}

/// Walks to a random node and turns a number into a string, deletes a key or element, or
/// replaces a value.
fn mutate(v: &mut serde_json::Value, rng: &mut Rng) {
    use serde_json::Value;
    match v {
        Value::Object(map) if !map.is_empty() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = keys[rng.below(keys.len())].clone();
            match rng.below(5) {
                0 => {
                    map.remove(&key);
                }
                1 => {
                    let replacement = [
                        Value::Null,
                        Value::from(-1.0),
                        Value::from("x"),
                        Value::from(1e308),
                        Value::Array(vec![]),
                    ][rng.below(5)]
                    .clone();
                    map.insert(key, replacement);
                }
                _ => {
                    if let Some(child) = map.get_mut(&key) {
                        mutate(child, rng);
                    }
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let i = rng.below(items.len());
            if rng.below(4) == 0 {
                items.remove(i);
            } else {
                mutate(&mut items[i], rng);
            }
        }
        Value::Number(n) => *v = Value::String(n.to_string()),
        _ => {}
    }
}
