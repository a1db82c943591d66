//! ISO-8601 UTC timestamps with milliseconds, integer-only (no chrono).

/// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ` (the workspace's one civil-date
/// conversion, `horst-dates`).
pub use horst_dates::rfc3339_ms as iso8601_ms;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(iso8601_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601_ms(1_791_399_600_000), "2026-10-07T19:00:00.000Z");
        assert_eq!(iso8601_ms(1_791_399_600_042), "2026-10-07T19:00:00.042Z");
        assert_eq!(iso8601_ms(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
        assert_eq!(iso8601_ms(1_709_251_199_000), "2024-02-29T23:59:59.000Z");
    }
}
