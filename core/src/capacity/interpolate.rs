//! Linear interpolation between two measured points, never beyond them.

/// The value a fraction `f` of the way from `a` to `b`, `f` in [0, 1]; the result is kept
/// between `a` and `b` (rounding in `a + f·(b − a)` could otherwise step one ulp outside).
pub fn between(a: f64, b: f64, f: f64) -> f64 {
    let f = f.clamp(0.0, 1.0);
    let v = a + f * (b - a);
    v.clamp(a.min(b), a.max(b))
}

/// The fraction of the way from `x0` to `x1` at which `x` lies, `x0 < x1`, `x` in [x0, x1];
/// clamped to [0, 1].
pub fn fraction(x0: f64, x1: f64, x: f64) -> f64 {
    ((x - x0) / (x1 - x0)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_between_the_ends() {
        assert_eq!(between(4.0, 16.0, 0.05), 4.6);
        assert_eq!(between(16.0, 4.0, 0.5), 10.0);
        assert_eq!(between(4.0, 16.0, 1.5), 16.0);
        assert_eq!(fraction(4.0, 16.0, 10.0), 0.5);
        assert_eq!(fraction(4.0, 16.0, 20.0), 1.0);
    }
}
