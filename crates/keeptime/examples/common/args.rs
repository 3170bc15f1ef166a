//! Positional arguments of the examples.

/// The `i`-th argument as a positive whole number, `default` if absent.
pub fn arg(args: &[String], i: usize, name: &str, default: u64) -> Result<u64, String> {
    match args.get(i) {
        None => Ok(default),
        Some(s) => match s.parse::<u64>() {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(format!("{name} must be a positive whole number, got {s:?}")),
        },
    }
}
