//! Duration strings as OpenClaw writes them: `"30m"`, `"1h30m"`, `"45s"`, `"500ms"`, `"30d"`,
//! `"1.5h"`. Units: `ms`, `s`, `m`, `h`, `d` (case-insensitive); components may repeat in any
//! order and are summed. A bare `"0"` means zero (OpenClaw's way to switch a timer off); any
//! other number needs a unit, because a unit-less `"30"` is ambiguous between minutes and
//! seconds across OpenClaw's settings.

use std::time::Duration;

use crate::error::ConfigError;

/// Parses a duration string. Errors name the input and the reason.
pub fn parse_duration(input: &str) -> Result<Duration, ConfigError> {
    let fail = |reason: &str| ConfigError::Duration {
        input: input.to_owned(),
        reason: reason.to_owned(),
    };
    let text = input.trim();
    if text.is_empty() {
        return Err(fail("empty"));
    }
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total_ms: f64 = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..number_len];
        if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
            return Err(fail("expected a number such as 30 or 1.5 before each unit"));
        }
        let amount: f64 = number.parse().map_err(|_| fail("malformed number"))?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].to_ascii_lowercase();
        let ms_per_unit = match unit.as_str() {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            "d" => 86_400_000.0,
            "" => return Err(fail("missing unit (use ms, s, m, h or d)")),
            _ => return Err(fail("unknown unit (use ms, s, m, h or d)")),
        };
        total_ms += amount * ms_per_unit;
        rest = &rest[unit_len..];
    }
    // A u64 of milliseconds is ~584 million years; anything near it is a typo.
    if !total_ms.is_finite() || total_ms >= 1e15 {
        return Err(fail("too long"));
    }
    Duration::try_from_secs_f64(total_ms / 1_000.0).map_err(|_| fail("too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms() {
        let cases: &[(&str, u64)] = &[
            ("30m", 30 * 60_000),
            ("1h", 3_600_000),
            ("45s", 45_000),
            ("500ms", 500),
            ("1h30m", 90 * 60_000),
            ("1h30m15s", 5_415_000),
            ("1.5h", 90 * 60_000),
            ("30d", 30 * 86_400_000),
            ("2H", 7_200_000),
            (" 10m ", 600_000),
            ("0", 0),
            ("0m", 0),
        ];
        for (input, ms) in cases {
            let parsed = parse_duration(input).map(|d| d.as_millis());
            assert_eq!(parsed.ok(), Some(u128::from(*ms)), "{input}");
        }
    }

    #[test]
    fn refused_forms() {
        for input in [
            "",
            "30",
            "m",
            "10x",
            "1..5h",
            ".5h",
            "5.h",
            "-5m",
            "1h 30m",
            "99999999999999d",
        ] {
            let error = parse_duration(input).err();
            assert!(
                matches!(&error, Some(ConfigError::Duration { input: i, .. }) if i == input),
                "{input}: {error:?}"
            );
        }
    }
}
