//! The stored form of an uploaded file (`run_files.content_gz`): the file's bytes exactly as
//! sent, compressed by whichever of two encodings is smaller for it (when the numbers `BTJ1`
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
//! Lossless by construction: a number is taken out only when formatting its parsed value gives
//! back the same bytes, and a file that holds a `0x00` byte keeps the plain zstd form. Nothing
//! depends on the file being JSON: a token is a maximal `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`
//! with a fraction or an exponent, wherever it stands.

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
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];
/// Stands in the skeleton for a number taken out.
const MARK: u8 = 0;
/// Below this many numbers the second zstd frame and the header cost more than they save.
const MIN_NUMBERS: usize = 64;

/// `content` in its smaller stored form (module docs).
pub fn encode(content: &[u8]) -> Vec<u8> {
    let plain = || zstd::bulk::compress(content, ZSTD_LEVEL).expect("compressing to memory");
    match encode_btj1(content) {
        Some((btj1, taken_bytes)) if taken_bytes * 2 >= content.len() => btj1,
        Some((btj1, _)) => {
            let plain = plain();
            if btj1.len() < plain.len() {
                btj1
            } else {
                plain
            }
        }
        None => plain(),
    }
}

/// The file's bytes from what [`encode`] stored, or from the gzip of rows written before
/// session 32. Errors: a description of what is corrupt.
pub fn decode(stored: &[u8]) -> Result<Vec<u8>, String> {
    if let Some(rest) = stored.strip_prefix(BTJ1) {
        decode_btj1(rest)
    } else if stored.starts_with(&ZSTD_MAGIC) {
        zstd::stream::decode_all(stored).map_err(|e| format!("not zstd: {e}"))
    } else if stored.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(stored), &mut out)
            .map_err(|e| format!("not gzip: {e}"))?;
        Ok(out)
    } else {
        Err("neither BTJ1, zstd nor gzip".into())
    }
}

/// The `BTJ1` form and the bytes of the numbers taken out, or `None` when the file has a
/// `0x00` byte or too few numbers to gain.
fn encode_btj1(content: &[u8]) -> Option<(Vec<u8>, usize)> {
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
    // The bytes of the numbers taken out (module docs: half the file skips the comparison).
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
    if u32::try_from(numbers.len()).is_err() {
        return None;
    }
    skeleton.write_all(&content[copied_from..]).ok()?;
    let skeleton = skeleton.into_inner().ok()?.finish().ok()?;
    let mut out = Vec::with_capacity(skeleton.len() + numbers.len() * 4);
    out.extend_from_slice(BTJ1);
    out.extend_from_slice(&(numbers.len() as u32).to_le_bytes());
    out.extend_from_slice(&u32::try_from(skeleton.len()).ok()?.to_le_bytes());
    out.extend_from_slice(&skeleton);
    let mut frame = zstd::stream::Encoder::new(out, NUMBERS_ZSTD_LEVEL).expect("zstd encoder");
    let mut plane = Vec::with_capacity(numbers.len());
    for byte in 0..8 {
        plane.clear();
        plane.extend(numbers.iter().map(|v| v.to_le_bytes()[byte]));
        frame.write_all(&plane).ok()?;
    }
    Some((frame.finish().ok()?, taken_bytes))
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

fn decode_btj1(rest: &[u8]) -> Result<Vec<u8>, String> {
    let word = |at: usize| -> Result<usize, String> {
        let bytes = rest.get(at..at + 4).ok_or("BTJ1: header cut short")?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")) as usize)
    };
    let count = word(0)?;
    let skeleton_len = word(4)?;
    let skeleton_end = 8usize
        .checked_add(skeleton_len)
        .filter(|&e| e <= rest.len())
        .ok_or("BTJ1: skeleton cut short")?;
    let skeleton = zstd::stream::decode_all(&rest[8..skeleton_end])
        .map_err(|e| format!("BTJ1 skeleton: not zstd: {e}"))?;
    let planes = zstd::stream::decode_all(&rest[skeleton_end..])
        .map_err(|e| format!("BTJ1 numbers: not zstd: {e}"))?;
    if planes.len() != count * 8 {
        return Err(format!(
            "BTJ1: {} bytes of numbers for {count} numbers",
            planes.len()
        ));
    }
    let marks = skeleton.iter().filter(|&&b| b == MARK).count();
    if marks != count {
        return Err(format!("BTJ1: {marks} places for {count} numbers"));
    }
    let mut out = Vec::with_capacity(skeleton.len() + count * 20);
    let mut n = 0;
    for piece in skeleton.split(|&b| b == MARK) {
        out.extend_from_slice(piece);
        if n < count {
            let bytes: [u8; 8] = std::array::from_fn(|k| planes[k * count + n]);
            python_repr(f64::from_le_bytes(bytes), &mut out);
            n += 1;
        }
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

    #[test]
    fn random_number_soup_reads_back_as_it_was() {
        // xorshift64: seeded, no dependency. Texts of number-like tokens and separators, long
        // enough (≥ 64 numbers) that the BTJ1 form is tried, with values Python would print
        // (from their bits) and tokens it would not (`1.50`, `1E5`, `-0`, `00.5`, `1.`).
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
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
