//! The stored form of an uploaded file (`run_files.content_gz`): the file's bytes exactly as
//! sent, compressed by whichever of its encodings is smallest for it (when the numbers `BTJ1`
//! takes out are half the file's bytes or more, `BTJ1` without compressing the whole text to
//! compare: such a number costs a text compressor 8–9 bytes, its double at most 8).
//!
//! - **zstd** (RFC 8878, magic `28 B5 2F FD`) of the whole file, at [`ZSTD_LEVEL`].
//! - **`BTJ1`**, for files full of floating-point numbers written by Python (the per-request
//!   arrays of `vllm bench serve --save-detailed`, SGLang's `--output-details`, ...): every
//!   number token whose text is exactly what Python's `repr(float)` prints for its value
//!   ([`python_repr`]) is taken out of the text and kept as its 8-byte IEEE 754 value;
//!   the rest of the text, the *skeleton*, keeps a `0x00` byte where each such number was.
//!   Layout, little-endian: magic `BTJ1`, the number count (`u32`), the skeleton's compressed
//!   length (`u32`), the skeleton as one zstd frame, then the numbers as one zstd frame
//!   ([`NUMBERS_ZSTD_LEVEL`]),
//!   byte-plane-shuffled (every number's first byte, then every second byte, ...).
//! - **`BTJ2`**, `BTJ1` for a file whose results' per-request samples hold its numbers
//!   already ([`References`], [`encode_referring`]): the numbers the samples hold are written
//!   as positions in them, a few bytes per column, the rest as in `BTJ1`. Layout: magic
//!   `BTJ2`, the number count (`u32`), the references' count (`u32`), the skeleton's length
//!   (`u32`) and zstd frame, the ops' length (`u32`) and ops, then the numbers left (the
//!   literals) as `BTJ1`'s numbers. Reading it takes the same references
//!   ([`decode_referring`]): the samples of the results read from the file, which
//!   `result_samples` keeps (nothing deletes them while the run exists), and the store checks
//!   the file's SHA-256 on every read of one.
//!
//! Why: a latency the tools take from `time.perf_counter()` is the difference of two readings
//! of a clock that has run for days, so its double has only ~24 significant bits and its low
//! mantissa bytes are zeros (28.5 trailing zero bits on average over the 6,008 chunk gaps of
//! `testdata/sglang/...gpt-oss-120b-h100.jsonl`), yet Python prints it with 16–17 decimal
//! digits, which a text compressor cannot tell from noise. Shuffled, those zero bytes are long
//! runs. On real files, zstd level 5 of the text against `BTJ1` (pinned by the tests below):
//! that SGLang file 71,795 against 36,437 bytes (−49 %); the mock-server `vllm bench serve
//! --save-detailed` file of `examples/history` (229 KB) 85,670 against 58,599 (−32 %; its
//! generated texts stay text).
//!
//! Why `BTJ2`: the chunk gaps and latencies of a detailed file are most of its numbers, and
//! the samples keep each of them already; stored twice they were 620 of the 847 bytes per
//! stored value of issue 12's data set. Kept once, the files of the tests below shrink a
//! further 57–62 %: the vLLM file 58,599 → 22,926 bytes, the SGLang file 36,437 → 15,743.
//!
//! Lossless by construction: a number is taken out only when formatting its parsed value gives
//! back the same bytes, and a file that holds a `0x00` byte keeps the plain zstd form. Nothing
//! depends on the file being JSON: a token is a maximal `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`
//! with a fraction or an exponent, wherever it stands.

pub use super::file_references::References;
use std::io::Write as _;

/// The zstd level of both encodings.
///
/// Measured on a real `vllm bench serve --save-detailed` file (229 KB; zstd 1.5 command line,
/// one core): gzip level 6 stores it in 84.6 KB and level 1 in 96.6 KB; zstd level 3 in
/// 91.5 KB at ≈ 470 MB/s, **level 5 in 85.7 KB at ≈ 270 MB/s**, level 9 in 84.2 KB at
/// ≈ 135 MB/s. A small summary file (1,152 B) is 613 B at gzip level 6 and 584 B at zstd
/// level 3 (BENCHMARKS.md "Session 32").
pub const ZSTD_LEVEL: i32 = 5;

/// The zstd level of `BTJ1`'s numbers: their shuffled bytes are runs of zeros and noise, which
/// level 1 stores within 1–4 % of level 5 at about twice the speed (zstd command line on the
/// shuffled chunk gaps and TTFTs of the two real files of the tests below: 20,257 against
/// 19,550 and 35,098 against 34,153 bytes).
const NUMBERS_ZSTD_LEVEL: i32 = 1;

const BTJ1: &[u8; 4] = b"BTJ1";
const BTJ2: &[u8; 4] = b"BTJ2";
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];
/// Stands in the skeleton for a number taken out.
const MARK: u8 = 0;
/// Below this many numbers the second zstd frame and the header cost more than they save.
const MIN_NUMBERS: usize = 64;

/// `content` in its smaller stored form (module docs).
pub fn encode(content: &[u8]) -> Vec<u8> {
    encode_referring(content, &References::default())
}

/// `content` in its smallest stored form, `BTJ2` among them when `references` (its results'
/// samples) hold numbers of the file: then [`decode_referring`] needs the same references.
pub fn encode_referring(content: &[u8], references: &References) -> Vec<u8> {
    let plain = || zstd::bulk::compress(content, ZSTD_LEVEL).expect("compressing to memory");
    let Some(taken) = take_numbers(content) else {
        return plain();
    };
    let best = if references.is_empty() {
        taken.btj1()
    } else {
        let (ops, literals) = references.split(&taken.numbers);
        let btj2 = taken.btj2(references.len(), &ops, &literals);
        // When the samples hold most of the numbers, `BTJ1` (those numbers as doubles) cannot
        // be smaller: not compressing them a second time to see is a tenth of a large
        // upload's CPU.
        if literals.len() * 2 <= taken.numbers.len() {
            btj2
        } else {
            match (btj2, taken.btj1()) {
                (Some(two), Some(one)) => Some(if two.len() < one.len() { two } else { one }),
                (two, one) => two.or(one),
            }
        }
    };
    let Some(best) = best else {
        return plain();
    };
    if taken.bytes * 2 >= content.len() {
        return best;
    }
    let plain = plain();
    if best.len() < plain.len() {
        best
    } else {
        plain
    }
}

/// Whether a stored file is `BTJ2`, which [`decode_referring`] reads only with its
/// references.
pub fn needs_references(stored: &[u8]) -> bool {
    stored.starts_with(BTJ2)
}

/// The file's bytes from what [`encode`] stored, or from the gzip of rows written before
/// session 32. Errors: a description of what is corrupt; a `BTJ2` row ([`needs_references`])
/// is one without its references.
pub fn decode(stored: &[u8]) -> Result<Vec<u8>, String> {
    decode_referring(stored, &References::default())
}

/// The file's bytes from what [`encode_referring`] stored with `references`, or from any
/// form [`decode`] reads.
///
/// # Errors
/// A description of what is corrupt, or of references other than those it was written with
/// (another count).
pub fn decode_referring(stored: &[u8], references: &References) -> Result<Vec<u8>, String> {
    if let Some(rest) = stored.strip_prefix(BTJ1) {
        let mut header = Header::new(rest, "BTJ1");
        let count = header.word()?;
        let skeleton = header.zstd_part("skeleton")?;
        let numbers = header.numbers(count)?;
        splice(&skeleton, &numbers, "BTJ1")
    } else if let Some(rest) = stored.strip_prefix(BTJ2) {
        let mut header = Header::new(rest, "BTJ2");
        let count = header.word()?;
        let refs_len = header.word()?;
        if refs_len != references.len() {
            return Err(format!(
                "BTJ2: written with {refs_len} references, read with {}",
                references.len()
            ));
        }
        let skeleton = header.zstd_part("skeleton")?;
        let ops_len = header.word()?;
        let ops = header.raw_part(ops_len, "ops")?.to_vec();
        let literals = header.numbers_rest()?;
        let numbers = references.join(&ops, &literals, count)?;
        splice(&skeleton, &numbers, "BTJ2")
    } else if stored.starts_with(&ZSTD_MAGIC) {
        zstd::stream::decode_all(stored).map_err(|e| format!("not zstd: {e}"))
    } else if stored.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(stored), &mut out)
            .map_err(|e| format!("not gzip: {e}"))?;
        Ok(out)
    } else {
        Err("neither BTJ1, BTJ2, zstd nor gzip".into())
    }
}

/// A file split into its skeleton and the numbers taken out of it.
struct Taken {
    /// The skeleton, one zstd frame.
    skeleton: Vec<u8>,
    numbers: Vec<f64>,
    /// The bytes of the numbers' text (module docs: half the file skips the comparison).
    bytes: usize,
}

impl Taken {
    fn btj1(&self) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(self.skeleton.len() + self.numbers.len() * 4);
        out.extend_from_slice(BTJ1);
        out.extend_from_slice(&u32::try_from(self.numbers.len()).ok()?.to_le_bytes());
        out.extend_from_slice(&u32::try_from(self.skeleton.len()).ok()?.to_le_bytes());
        out.extend_from_slice(&self.skeleton);
        numbers_frame(out, &self.numbers)
    }

    /// `BTJ2` of these numbers split by [`References::split`] over `references` numbers.
    fn btj2(&self, references: usize, ops: &[u8], literals: &[f64]) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(self.skeleton.len() + ops.len() + literals.len() * 4);
        out.extend_from_slice(BTJ2);
        out.extend_from_slice(&u32::try_from(self.numbers.len()).ok()?.to_le_bytes());
        out.extend_from_slice(&u32::try_from(references).ok()?.to_le_bytes());
        out.extend_from_slice(&u32::try_from(self.skeleton.len()).ok()?.to_le_bytes());
        out.extend_from_slice(&self.skeleton);
        out.extend_from_slice(&u32::try_from(ops.len()).ok()?.to_le_bytes());
        out.extend_from_slice(ops);
        numbers_frame(out, literals)
    }
}

/// `out` followed by `numbers` as one zstd frame, byte-plane-shuffled.
fn numbers_frame(out: Vec<u8>, numbers: &[f64]) -> Option<Vec<u8>> {
    let mut frame = zstd::stream::Encoder::new(out, NUMBERS_ZSTD_LEVEL).expect("zstd encoder");
    let mut plane = Vec::with_capacity(numbers.len());
    for byte in 0..8 {
        plane.clear();
        plane.extend(numbers.iter().map(|v| v.to_le_bytes()[byte]));
        frame.write_all(&plane).ok()?;
    }
    frame.finish().ok()
}

/// The skeleton and numbers of `content`, or `None` when the file has a `0x00` byte or too
/// few numbers to gain.
fn take_numbers(content: &[u8]) -> Option<Taken> {
    if content.contains(&MARK) {
        return None;
    }
    // Made once the file has shown `MIN_NUMBERS` numbers to take out (most summary files never
    // do, and a zstd context is not free); buffered, since each number leaves two small writes
    // and every write reaching the encoder is a call into zstd (a tenth of a large upload's CPU
    // unbuffered).
    let mut skeleton: Option<std::io::BufWriter<zstd::stream::Encoder<'static, Vec<u8>>>> = None;
    // The places, (start, end) in `content`, of numbers taken out and not yet written.
    let mut pending: Vec<(usize, usize)> = Vec::with_capacity(MIN_NUMBERS);
    let mut numbers: Vec<f64> = Vec::new();
    let mut repr = Vec::with_capacity(32);
    let mut taken_bytes = 0;
    // Where the bytes not yet written to the skeleton start.
    let mut copied_from = 0;
    let mut i = 0;
    while i < content.len() {
        let b = content[i];
        if !(b.is_ascii_digit() || b == b'-') {
            i += 1;
            continue;
        }
        let (end, is_float) = number_token(content, i);
        if end == i {
            i += 1;
            continue;
        }
        if is_float {
            // The token is ASCII, so this cannot fail.
            let text = std::str::from_utf8(&content[i..end]).expect("ASCII");
            if let Ok(value) = text.parse::<f64>() {
                repr.clear();
                python_repr(value, &mut repr);
                if repr == text.as_bytes() {
                    taken_bytes += end - i;
                    numbers.push(value);
                    pending.push((i, end));
                    if skeleton.is_some() || pending.len() == MIN_NUMBERS {
                        let w = skeleton.get_or_insert_with(|| {
                            std::io::BufWriter::with_capacity(
                                1 << 16,
                                zstd::stream::Encoder::new(Vec::new(), ZSTD_LEVEL)
                                    .expect("zstd encoder"),
                            )
                        });
                        for (start, end) in pending.drain(..) {
                            w.write_all(&content[copied_from..start]).ok()?;
                            w.write_all(&[MARK]).ok()?;
                            copied_from = end;
                        }
                    }
                }
            }
        }
        i = end;
    }
    let mut skeleton = skeleton?;
    skeleton.write_all(&content[copied_from..]).ok()?;
    Some(Taken {
        skeleton: skeleton.into_inner().ok()?.finish().ok()?,
        numbers,
        bytes: taken_bytes,
    })
}

/// The end of the number token starting at `start` (a digit or `-`) and whether it has a
/// fraction or an exponent; `end == start` when a `-` starts no number.
fn number_token(s: &[u8], start: usize) -> (usize, bool) {
    let digits = |mut i: usize| {
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = start + usize::from(s[start] == b'-');
    let int_end = digits(i);
    if int_end == i {
        return (start, false);
    }
    i = int_end;
    let mut is_float = false;
    if i + 1 < s.len() && s[i] == b'.' && s[i + 1].is_ascii_digit() {
        i = digits(i + 1);
        is_float = true;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        let sign = usize::from(i + 1 < s.len() && (s[i + 1] == b'+' || s[i + 1] == b'-'));
        let exp_end = digits(i + 1 + sign);
        if exp_end > i + 1 + sign {
            i = exp_end;
            is_float = true;
        }
    }
    (i, is_float)
}

/// Reads the parts of a `BTJ1`/`BTJ2` row after its magic, in order.
struct Header<'a> {
    rest: &'a [u8],
    at: usize,
    form: &'static str,
}

impl<'a> Header<'a> {
    fn new(rest: &'a [u8], form: &'static str) -> Self {
        Header { rest, at: 0, form }
    }

    fn word(&mut self) -> Result<usize, String> {
        let bytes = self.raw_part(4, "header")?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")) as usize)
    }

    fn raw_part(&mut self, len: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&e| e <= self.rest.len())
            .ok_or_else(|| format!("{}: {what} cut short", self.form))?;
        let part = &self.rest[self.at..end];
        self.at = end;
        Ok(part)
    }

    /// A length word and that many bytes of one zstd frame, decompressed.
    fn zstd_part(&mut self, what: &str) -> Result<Vec<u8>, String> {
        let len = self.word()?;
        let part = self.raw_part(len, what)?;
        zstd::stream::decode_all(part).map_err(|e| format!("{} {what}: not zstd: {e}", self.form))
    }

    /// The rest: `count` numbers as [`numbers_frame`] wrote them.
    fn numbers(&mut self, count: usize) -> Result<Vec<f64>, String> {
        let numbers = self.numbers_rest()?;
        if numbers.len() != count {
            return Err(format!(
                "{}: {} numbers stored for {count}",
                self.form,
                numbers.len()
            ));
        }
        Ok(numbers)
    }

    /// The rest: the numbers [`numbers_frame`] wrote, however many.
    fn numbers_rest(&mut self) -> Result<Vec<f64>, String> {
        let planes = zstd::stream::decode_all(&self.rest[self.at..])
            .map_err(|e| format!("{} numbers: not zstd: {e}", self.form))?;
        self.at = self.rest.len();
        if planes.len() % 8 != 0 {
            return Err(format!("{}: {} bytes of numbers", self.form, planes.len()));
        }
        let count = planes.len() / 8;
        Ok((0..count)
            .map(|n| f64::from_le_bytes(std::array::from_fn(|k| planes[k * count + n])))
            .collect())
    }
}

/// The skeleton with each mark replaced by the next number as Python prints it.
fn splice(skeleton: &[u8], numbers: &[f64], form: &str) -> Result<Vec<u8>, String> {
    let marks = skeleton.iter().filter(|&&b| b == MARK).count();
    if marks != numbers.len() {
        return Err(format!(
            "{form}: {marks} places for {} numbers",
            numbers.len()
        ));
    }
    let mut out = Vec::with_capacity(skeleton.len() + numbers.len() * 20);
    let mut numbers = numbers.iter();
    for (k, piece) in skeleton.split(|&b| b == MARK).enumerate() {
        if k > 0 {
            python_repr(*numbers.next().expect("counted"), &mut out);
        }
        out.extend_from_slice(piece);
    }
    Ok(out)
}

/// Appends Python's `repr(value)` of a finite float to `out`: the shortest digits that read
/// back as `value`, in fixed notation when the decimal point falls within 16 digits of them
/// (`0.0001`, `1234.5`, `1e+16` is the first exponent form) and `d.ddde±XX` otherwise
/// (`1e-05`, `1.5e+16`), with `.0` on whole numbers. Source: CPython `Python/pystrtod.c`,
/// `format_float_short` with `repr`'s mode 0 (`decpt <= -4 || decpt > 16` chooses the
/// exponent). Not finite: Rust's own text (`NaN`, `inf`), which never equals a number token,
/// so such values are never taken out.
///
/// The shortest digits come from `ryu` (the formatter serde_json uses, so no new code in the
/// build): the same digits as Python's, both being the shortest that round-trip and, among
/// those, the closest. Writes bytes, allocates nothing: it runs for every number of a file.
pub fn python_repr(value: f64, out: &mut Vec<u8>) {
    if !value.is_finite() {
        out.extend_from_slice(value.to_string().as_bytes());
        return;
    }
    if value == 0.0 {
        out.extend_from_slice(if value.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    let mut ryu = ryu::Buffer::new();
    let text = ryu.format_finite(value).as_bytes();
    let (negative, body) = match text.strip_prefix(b"-") {
        Some(body) => (true, body),
        None => (false, text),
    };
    let (mantissa, exp10) = match body.iter().position(|b| *b == b'e' || *b == b'E') {
        Some(e) => (&body[..e], parse_exponent(&body[e + 1..])),
        None => (body, 0),
    };
    // The mantissa's digits without its point; `decpt`: how many of them stand before the
    // point once the exponent is applied (Python's `decpt`: value = 0.DIGITS × 10^decpt).
    let mut digits = [0u8; 32];
    let mut n = 0;
    let mut point = None;
    for &b in mantissa {
        if b == b'.' {
            point = Some(n);
        } else if n < digits.len() {
            digits[n] = b;
            n += 1;
        }
    }
    let mut decpt = point.unwrap_or(n) as i32 + exp10;
    let mut first = 0;
    while first + 1 < n && digits[first] == b'0' {
        first += 1;
        decpt -= 1;
    }
    while n > first + 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    let digits = &digits[first..n];
    let n = digits.len() as i32;
    if negative {
        out.push(b'-');
    }
    if decpt <= -4 || decpt > 16 {
        out.push(digits[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        let exp = decpt - 1;
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let exp = exp.unsigned_abs();
        if exp >= 100 {
            out.push(b'0' + (exp / 100) as u8);
        }
        out.push(b'0' + (exp / 10 % 10) as u8);
        out.push(b'0' + (exp % 10) as u8);
    } else if decpt <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-decpt) as usize));
        out.extend_from_slice(digits);
    } else if decpt < n {
        out.extend_from_slice(&digits[..decpt as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[decpt as usize..]);
    } else {
        out.extend_from_slice(digits);
        out.extend(std::iter::repeat_n(b'0', (decpt - n) as usize));
        out.extend_from_slice(b".0");
    }
}

/// The exponent of ryu's `e` notation (`-5`, `16`): ASCII digits with an optional sign.
fn parse_exponent(text: &[u8]) -> i32 {
    let (sign, digits) = match text.split_first() {
        Some((b'-', rest)) => (-1, rest),
        Some((b'+', rest)) => (1, rest),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i32, |acc, d| acc * 10 + i32::from(d - b'0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(v: f64) -> String {
        let mut s = Vec::new();
        python_repr(v, &mut s);
        String::from_utf8(s).unwrap()
    }

    #[test]
    fn floats_print_as_python_prints_them() {
        // Each right-hand side is what CPython 3.11 prints for `repr(float(lhs))`.
        for (v, python) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000015, "1.5e-05"),
            (123.456, "123.456"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (0.01589746493846178, "0.01589746493846178"),
            (2.8882675957866013, "2.8882675957866013"),
            (-42.5, "-42.5"),
            (123456789012345.6, "123456789012345.6"),
            (1e22, "1e+22"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (0.3, "0.3"),
            (100.0, "100.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (12345678901234567.0, "1.2345678901234568e+16"),
        ] {
            assert_eq!(repr(v), python, "{v:e}");
        }
    }

    #[test]
    fn tokens_are_maximal_numbers() {
        let t = |s: &str| number_token(s.as_bytes(), 0);
        assert_eq!(t("12.5,"), (4, true));
        assert_eq!(t("-0.25]"), (5, true));
        assert_eq!(t("1e-05 "), (5, true));
        assert_eq!(t("512,"), (3, false));
        assert_eq!(t("3.x"), (1, false));
        assert_eq!(t("2e"), (1, false));
        assert_eq!(t("-x"), (0, false));
    }

    fn round_trip(content: &[u8]) -> Vec<u8> {
        let stored = encode(content);
        assert_eq!(decode(&stored).unwrap(), content);
        stored
    }

    #[test]
    fn real_detailed_files_are_stored_as_btj1_and_read_back_exactly() {
        // (file, its size, plain zstd, BTJ1): the real `vllm bench serve --save-detailed` file
        // of a run against the mock server, and a real SGLang `--output-details` line from a
        // public repository (testdata/README.md).
        for (file, sizes) in [
            (
                &include_bytes!("../../../examples/history/baseline_completions_c4_isl512_osl128.json")[..],
                (229_444, 85_670, 58_599),
            ),
            (
                &include_bytes!("../../../testdata/sglang/llm-benchmaxxing-sglang-bench_serving-2026-03-output-details-server_info-gpt-oss-120b-h100.jsonl")[..],
                (199_075, 71_795, 36_437),
            ),
        ] {
            let stored = round_trip(file);
            assert!(stored.starts_with(BTJ1));
            let plain = zstd::bulk::compress(file, ZSTD_LEVEL).unwrap();
            assert_eq!((file.len(), plain.len(), stored.len()), sizes);
        }
    }

    /// The samples the adapter reads from `file` (one result), and the references they make.
    fn references_of(name: &str, file: &[u8]) -> References {
        let text = std::str::from_utf8(file).unwrap();
        let mut read =
            benchtrail_core::adapters::read_files(&[benchtrail_core::adapters::FileSpec {
                name,
                format: None,
                text,
            }])
            .unwrap();
        let samples = read.remove(0).results.remove(0).samples.unwrap();
        References::of_samples([&samples])
    }

    #[test]
    fn a_detailed_file_refers_to_its_samples_and_reads_back_exactly_with_them() {
        // (file, BTJ1, BTJ2): the TTFTs, chunk gaps and latencies are kept once, by the
        // samples; the file keeps the rest (start and queue times, texts, lengths).
        for (name, file, sizes) in [
            (
                "baseline_completions_c4_isl512_osl128.json",
                &include_bytes!("../../../examples/history/baseline_completions_c4_isl512_osl128.json")[..],
                (58_599, 22_926),
            ),
            (
                "gpt-oss-120b-h100.jsonl",
                &include_bytes!("../../../testdata/sglang/llm-benchmaxxing-sglang-bench_serving-2026-03-output-details-server_info-gpt-oss-120b-h100.jsonl")[..],
                (36_437, 15_743),
            ),
        ] {
            let references = references_of(name, file);
            let stored = encode_referring(file, &references);
            assert!(stored.starts_with(BTJ2), "{name}");
            assert!(needs_references(&stored));
            assert_eq!(decode_referring(&stored, &references).unwrap(), file, "{name}");
            assert_eq!((encode(file).len(), stored.len()), sizes, "{name}");
            // Without its references, or with others, it is an error, never other bytes.
            assert!(decode(&stored).is_err());
            let other = References::of_samples([&benchtrail_core::samples::RequestSamples {
                success: vec![true],
                ttft_ms: Some(vec![Some(1.0)]),
                ..Default::default()
            }]);
            assert!(decode_referring(&stored, &other).is_err());
        }
    }

    #[test]
    fn numbers_the_samples_do_not_hold_stay_literals() {
        // A file of three arrays: the samples' TTFTs (in seconds, as the tool writes them)
        // with one of them printed by another tool's rounding, and numbers of no sample.
        let ttft_s: Vec<f64> = (0..100)
            .map(|i| (3.0e6 + 0.05 + i as f64 * 1e-3) - 3.0e6)
            .collect();
        let samples = benchtrail_core::samples::RequestSamples {
            success: vec![true; 100],
            ttft_ms: Some(ttft_s.iter().map(|s| Some(s * 1000.0)).collect()),
            ..Default::default()
        };
        let references = References::of_samples([&samples]);
        let mut text = String::from("{\"ttfts\": [");
        for (i, s) in ttft_s.iter().enumerate() {
            text += &if i == 40 { "0.5".to_string() } else { repr(*s) };
            text += ", ";
        }
        text += "0.25], \"other\": [";
        for i in 0..100 {
            text += &repr(1.0 / (i as f64 + 3.0));
            text += ", ";
        }
        text += "0.125]}";
        let stored = encode_referring(text.as_bytes(), &references);
        assert!(stored.starts_with(BTJ2));
        assert_eq!(
            decode_referring(&stored, &references).unwrap(),
            text.as_bytes()
        );
    }

    #[test]
    fn a_summary_file_stays_zstd() {
        let file = include_bytes!("../../../testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json");
        let stored = round_trip(file);
        assert!(stored.starts_with(&ZSTD_MAGIC));
    }

    #[test]
    fn anything_reads_back_as_it_was() {
        for text in [
            &b""[..],
            b"not json at all 1.5 -2.25e+07 1e5 0.10 00.5 -",
            b"[1.5, 2.5]\x00 a file with a NUL byte",
            b"1.0e5 1E5 1.5E+16 -0.0 -0 .5 5. 1..2 NaN Infinity",
        ] {
            round_trip(text);
        }
        // Enough numbers for BTJ1, some printed other than Python would (kept as text).
        let mut many = String::from("{\"x\": [");
        for i in 0..500 {
            // As a clock gives them (`time.perf_counter()` differences: zero low bits).
            let v = (3.0e6 + (i as f64) * 0.0137) - 3.0e6;
            many += &if i % 7 == 0 {
                format!("{v:.3}, ")
            } else {
                format!("{}, ", repr(v))
            };
        }
        many += "1]}";
        assert!(round_trip(many.as_bytes()).starts_with(BTJ1));
    }

    /// A seeded xorshift64 generator: random test inputs without a dependency.
    fn xorshift64(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    #[test]
    fn random_number_soup_reads_back_as_it_was() {
        // Texts of number-like tokens and separators, long
        // enough (≥ 64 numbers) that the BTJ1 form is tried, with values Python would print
        // (from their bits) and tokens it would not (`1.50`, `1E5`, `-0`, `00.5`, `1.`).
        let mut next = xorshift64(0x9E37_79B9_7F4A_7C15);
        for _ in 0..200 {
            let mut text = String::new();
            for _ in 0..(next() % 400) {
                match next() % 9 {
                    0 => text += "1.50",
                    1 => text += "1E5",
                    2 => text += "-0",
                    3 => text += "00.5",
                    4 => text += "1.",
                    5 => text += ", ",
                    6 => text += "e-",
                    _ => {
                        let v = f64::from_bits(next());
                        text += &repr(if v.is_finite() { v } else { 0.25 });
                    }
                }
            }
            round_trip(text.as_bytes());
        }
    }

    #[test]
    fn files_mixing_their_samples_numbers_with_others_read_back_as_they_were() {
        // Each text: the samples' TTFTs and gaps in seconds, in runs
        // taken from anywhere in them, among numbers of no sample and odd tokens.
        let mut next = xorshift64(0x2545_F491_4F6C_DD1D);
        let mut btj2 = 0;
        for _ in 0..100 {
            let requests = 1 + (next() % 20) as usize;
            let clock = |r: u64| (3.0e6 + (r % 100_000) as f64 * 1e-6) - 3.0e6;
            let ttft_s: Vec<f64> = (0..requests).map(|_| clock(next())).collect();
            let gaps_s: Vec<Vec<f64>> = (0..requests)
                .map(|_| (0..next() % 30).map(|_| clock(next())).collect())
                .collect();
            let references =
                References::of_samples([&super::super::file_references::samples_in_seconds(
                    &ttft_s, &gaps_s,
                )]);
            let all: Vec<f64> = ttft_s
                .iter()
                .chain(gaps_s.iter().flatten())
                .copied()
                .collect();
            let mut text = String::from("[");
            for _ in 0..(next() % 40) {
                match next() % 4 {
                    0 => text += "1.50, 7, ",
                    1 => text += &format!("{}, ", repr(f64::from(next() as u32) / 7.0)),
                    _ if !all.is_empty() => {
                        let from = (next() as usize) % all.len();
                        let to = (from + 1 + (next() as usize) % 50).min(all.len());
                        for v in &all[from..to] {
                            text += &repr(*v);
                            text += ", ";
                        }
                    }
                    _ => {}
                }
            }
            text += "0]";
            let stored = encode_referring(text.as_bytes(), &references);
            btj2 += usize::from(stored.starts_with(BTJ2));
            assert_eq!(
                decode_referring(&stored, &references).unwrap(),
                text.as_bytes(),
                "{text}"
            );
        }
        assert!(btj2 >= 20, "{btj2} of 100 texts stored as BTJ2");
    }

    #[test]
    fn corrupt_rows_are_errors_not_panics() {
        let stored = encode(include_bytes!(
            "../../../examples/history/baseline_completions_c4_isl512_osl128.json"
        ));
        for cut in [3, 6, 10, 40, stored.len() - 1] {
            assert!(decode(&stored[..cut]).is_err(), "cut at {cut}");
        }
        assert!(decode(b"????").is_err());
    }
}
