//! UTC timestamps as RFC 3339 / ISO 8601 text with milliseconds (`2026-10-07T19:00:00.000Z`),
//! integer-only and without a date library: the one civil-date conversion of the workspace
//! (both contracts write times this way; the gateway, the session views and the benchmarks
//! use it).
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

const DAY_S: u64 = 86_400;

/// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
///
/// Digits are written into a fixed buffer: every session event and every pending entry carries
/// such a time, and `format!` took about 2,900 instructions for one (1.7 % of the API's in the
/// sessions benchmark). A year past 9999 (never, short of a broken clock) is written whole.
pub fn rfc3339_ms(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, sod) = (secs / DAY_S, secs % DAY_S);
    let (y, m, d) = civil_from_days(days);
    if y > 9999 {
        return format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            sod / 3600,
            (sod / 60) % 60,
            sod % 60,
            unix_ms % 1000
        );
    }
    let mut b = *b"0000-00-00T00:00:00.000Z";
    digits(&mut b[0..4], y);
    digits(&mut b[5..7], m);
    digits(&mut b[8..10], d);
    digits(&mut b[11..13], sod / 3600);
    digits(&mut b[14..16], (sod / 60) % 60);
    digits(&mut b[17..19], sod % 60);
    digits(&mut b[20..23], unix_ms % 1000);
    // ASCII digits and separators: always UTF-8. Collected char by char it cost three times
    // the rest of the function.
    std::str::from_utf8(&b).unwrap_or_default().to_owned()
}

/// Writes the last `out.len()` decimal digits of `n` into `out`, zero-padded.
fn digits(out: &mut [u8], mut n: u64) {
    for c in out.iter_mut().rev() {
        *c = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// The UTC date of Unix milliseconds, `YYYY-MM-DD` (daily counters are named by it).
pub fn utc_date(unix_ms: u64) -> String {
    let (y, m, d) = civil_from_days(unix_ms / 1000 / DAY_S);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Reads `YYYY-MM-DDTHH:MM:SS.mmmZ` (as [`rfc3339_ms`] writes it) back to Unix milliseconds;
/// `None` for anything else or a time before 1970.
pub fn parse_rfc3339_ms(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let shape = b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z';
    if !shape {
        return None;
    }
    let n = |a: usize, z: usize| -> Option<u64> {
        let part = s.get(a..z)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (y, m, d) = (n(0, 4)?, n(5, 7)?, n(8, 10)?);
    let (hh, mm, ss, ms) = (n(11, 13)?, n(14, 16)?, n(17, 19)?, n(20, 23)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let days = days_from_civil(y, m, d)?;
    Some(((days * DAY_S + hh * 3600 + mm * 60 + ss) * 1000) + ms)
}

/// Reads an HTTP date (RFC 9110 section 5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`, and the
/// obsolete `Sunday, 06-Nov-94 08:49:37 GMT` and `Sun Nov  6 08:49:37 1994`, all of which a
/// recipient must read) to Unix milliseconds; `None` for anything else, a day the month does
/// not have, or a time before 1970. The weekday is not checked (it adds nothing to the date).
/// A two-digit year is 19xx from 70, else 20xx.
pub fn parse_http_date_ms(s: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let num = |t: &str, len: usize| -> Option<u64> {
        (t.len() == len && t.bytes().all(|c| c.is_ascii_digit())).then(|| t.parse().ok())?
    };
    let month = |t: &str| -> Option<u64> { Some(MONTHS.iter().position(|m| *m == t)? as u64 + 1) };
    let weekday = |t: &str| t.len() >= 3 && t.bytes().all(|c| c.is_ascii_alphabetic());
    let words: Vec<&str> = s.split(' ').collect();
    let (y, m, d, time) = match words.as_slice() {
        // IMF-fixdate
        [wd, d, m, y, time, "GMT"] if wd.len() == 4 && wd.ends_with(',') && weekday(&wd[..3]) => {
            (num(y, 4)?, month(m)?, num(d, 2)?, *time)
        }
        // RFC 850
        [wd, date, time, "GMT"] if wd.ends_with(',') && weekday(&wd[..wd.len() - 1]) => {
            let mut p = date.split('-');
            let (d, m, yy) = (p.next()?, p.next()?, p.next()?);
            let yy = num(yy, 2)?;
            (
                if yy >= 70 { 1900 + yy } else { 2000 + yy },
                month(m)?,
                num(d, 2)?,
                *time,
            )
        }
        // asctime: a day below 10 is padded with a space, so the split gives an empty word.
        [wd, m, "", d, time, y] if wd.len() == 3 && weekday(wd) => {
            (num(y, 4)?, month(m)?, num(d, 1)?, *time)
        }
        [wd, m, d, time, y] if wd.len() == 3 && weekday(wd) => {
            (num(y, 4)?, month(m)?, num(d, 2)?, *time)
        }
        _ => return None,
    };
    let mut hms = time.split(':');
    let (hh, mm, ss) = (
        num(hms.next()?, 2)?,
        num(hms.next()?, 2)?,
        num(hms.next()?, 2)?,
    );
    if hms.next().is_some() || hh > 23 || mm > 59 || ss > 60 || d == 0 {
        return None;
    }
    let days = days_from_civil(y, m, d)?;
    // 31 Feb would be read as 3 March: such a date is unreadable, not another day.
    if civil_from_days(days) != (y, m, d) {
        return None;
    }
    // A leap second is read as the second before it.
    Some((days * DAY_S + hh * 3600 + mm * 60 + ss.min(59)) * 1000)
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm, for
/// non-negative day counts).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// The inverse of [`civil_from_days`]; `None` before 1970.
fn days_from_civil(y: u64, m: u64, d: u64) -> Option<u64> {
    let y = if m <= 2 { y.checked_sub(1)? } else { y };
    let era = y / 400;
    let yoe = y % 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).checked_sub(719_468)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_in_their_three_forms() {
        let at = parse_rfc3339_ms("1994-11-06T08:49:37.000Z");
        for s in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date_ms(s), at, "{s}");
        }
        assert_eq!(
            parse_http_date_ms("Sun, 06 Dec 2026 18:00:09 GMT"),
            parse_rfc3339_ms("2026-12-06T18:00:09.000Z")
        );
        assert_eq!(
            parse_http_date_ms("Sunday, 06-Dec-26 18:00:09 GMT"),
            parse_rfc3339_ms("2026-12-06T18:00:09.000Z")
        );
        assert_eq!(
            parse_http_date_ms("Thu Dec 31 23:59:59 2099"),
            parse_rfc3339_ms("2099-12-31T23:59:59.000Z")
        );
        for bad in [
            "",
            "soon",
            "7",
            "2026-12-06T18:00:09Z",
            "Sun, 6 Dec 2026 18:00:09 GMT",
            "Sun, 06 Dec 2026 18:00:09 CET",
            "Sun, 06 Dec 2026 18:00:09 GMT ",
            "Sun, 31 Feb 2026 18:00:09 GMT",
            "Sun, 00 Dec 2026 18:00:09 GMT",
            "Sun, 06 Dez 2026 18:00:09 GMT",
            "Sun, 06 Dec 2026 24:00:09 GMT",
            "Sun, 06 Dec 2026 18:00 GMT",
            "Sun, 06 Dec 2026 18:00:09:00 GMT",
            "Sun, 06 Dec 1969 18:00:09 GMT",
            "Sun, 06 Dec +026 18:00:09 GMT",
            "Sun Dec 06 18:00:09 2026 GMT",
            "Sun Dec  06 18:00:09 2026",
        ] {
            assert_eq!(parse_http_date_ms(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn known_instants() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_791_399_600_000), "2026-10-07T19:00:00.000Z");
        assert_eq!(rfc3339_ms(1_791_399_600_042), "2026-10-07T19:00:00.042Z");
        assert_eq!(rfc3339_ms(1_796_083_199_123), "2026-11-30T23:59:59.123Z");
        assert_eq!(rfc3339_ms(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
        assert_eq!(rfc3339_ms(1_709_251_199_000), "2024-02-29T23:59:59.000Z");
        assert_eq!(utc_date(1_796_083_199_500), "2026-11-30");
        assert_eq!(utc_date(1_796_083_200_000), "2026-12-01");
    }

    /// The digits written by hand are what `format!` writes, across four centuries of days
    /// at every kind of time of day, and past the year 9999.
    #[test]
    fn formatting_matches_the_format_macro() {
        let by_format = |unix_ms: u64| {
            let secs = unix_ms / 1000;
            let (days, sod) = (secs / DAY_S, secs % DAY_S);
            let (y, m, d) = civil_from_days(days);
            format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
                sod / 3600,
                (sod / 60) % 60,
                sod % 60,
                unix_ms % 1000
            )
        };
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for days in (0..146_097 * 4).step_by(13) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ms = days * DAY_S * 1000 + x % (DAY_S * 1000);
            assert_eq!(rfc3339_ms(ms), by_format(ms), "{ms}");
        }
        for ms in [
            0,
            DAY_S * 1000 - 1,
            253_402_300_799_999,
            253_402_300_800_000,
            u64::MAX,
        ] {
            assert_eq!(rfc3339_ms(ms), by_format(ms), "{ms}");
        }
    }

    #[test]
    fn parsing_is_the_inverse_of_formatting() {
        for ms in [
            0,
            951_782_400_000,
            1_709_251_199_000,
            1_791_399_600_042,
            4_102_444_799_999,
        ] {
            assert_eq!(parse_rfc3339_ms(&rfc3339_ms(ms)), Some(ms));
        }
        // Every day of four centuries round-trips through the two conversions.
        for days in (0..146_097 * 4).step_by(7) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), Some(days));
        }
        for bad in [
            "",
            "2026-10-07 19:00:00.000Z",
            "2026-13-07T19:00:00.000Z",
            "1969-12-31T23:59:59.999Z",
            "2026-10-07T19:00:00.000",
            "+026-10-07T19:00:00.000Z",
        ] {
            assert_eq!(parse_rfc3339_ms(bad), None, "{bad}");
        }
    }
}
