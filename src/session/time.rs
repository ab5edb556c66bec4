//! Wall-clock time as the event log writes it: RFC 3339 in UTC with
//! milliseconds (`2026-11-30T12:34:56.789Z`), and the `yyyymmdd-hhmmss`
//! stamp session ids start with. Computed from `SystemTime` with the
//! proleptic Gregorian calendar, no time-zone data needed.

use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC instant broken into calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub milli: u32,
}

impl Civil {
    pub(crate) fn of(t: SystemTime) -> Civil {
        let ms: i128 = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_millis() as i128,
            // Before 1970: floor, so -0.5 ms is 23:59:59.999 of 1969-12-31.
            Err(e) => {
                let d = e.duration();
                -(d.as_millis() as i128) - i128::from(d.subsec_nanos() % 1_000_000 != 0)
            }
        };
        let days = ms.div_euclid(86_400_000) as i64;
        let in_day = ms.rem_euclid(86_400_000) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: in_day / 3_600_000,
            minute: in_day / 60_000 % 60,
            second: in_day / 1000 % 60,
            milli: in_day % 1000,
        }
    }

    /// `yyyymmdd-hhmmss`.
    pub(crate) fn stamp(&self) -> String {
        format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// `t` formatted as RFC 3339 in UTC with milliseconds:
/// `2026-11-30T12:34:56.789Z`.
pub fn rfc3339_millis(t: SystemTime) -> String {
    let c = Civil::of(t);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.milli
    )
}

/// Days since 1970-01-01 → (year, month 1-12, day 1-31), after Howard
/// Hinnant's `civil_from_days`.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March first
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(ms: u64) -> String {
        rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms))
    }

    #[test]
    fn known_instants() {
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(at(1_798_720_496_789), "2026-12-31T12:34:56.789Z");
        assert_eq!(at(4_102_444_800_000), "2100-01-01T00:00:00.000Z");
    }

    #[test]
    fn before_the_epoch_floors() {
        let t = UNIX_EPOCH - Duration::from_micros(500);
        assert_eq!(rfc3339_millis(t), "1969-12-31T23:59:59.999Z");
        let t = UNIX_EPOCH - Duration::from_millis(86_400_000);
        assert_eq!(rfc3339_millis(t), "1969-12-31T00:00:00.000Z");
    }

    #[test]
    fn stamp() {
        let c = Civil::of(UNIX_EPOCH + Duration::from_millis(1_798_720_496_789));
        assert_eq!(c.stamp(), "20261231-123456");
    }
}
