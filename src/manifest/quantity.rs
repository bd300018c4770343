//! Kubernetes quantities (`resource.Quantity`) and IntOrString percentages.
//!
//! Grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go):
//! `<sign>?<digits>(.<digits>)?<suffix>` with suffix a binary SI (`Ki`..`Ei`), decimal SI
//! (`n u m "" k M G T P E`) or decimal exponent (`e3`, `E-2`). Values are exact until converted;
//! conversions round up, as `Quantity.Value()` and `MilliValue()` do.

use std::fmt;

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum QuantityError {
    #[error("`{0}` is not a valid quantity (expected e.g. `500m`, `2`, `1.5Gi`, `1e3`)")]
    Syntax(String),
    #[error("`{0}` is out of range for a 64-bit integer")]
    Range(String),
}

/// An exact quantity: `mantissa × 10^exp10 × 2^exp2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    mantissa: i128,
    exp10: i32,
    exp2: u32,
}

impl Quantity {
    pub fn parse(text: &str) -> Result<Quantity, QuantityError> {
        let syntax = || QuantityError::Syntax(text.to_string());
        let s = text.trim();
        let (negative, s) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let number_end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
        let (number, suffix) = s.split_at(number_end);
        let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
        if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
            return Err(syntax());
        }
        let digits = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 36 {
            return Err(QuantityError::Range(text.to_string()));
        }
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| syntax())?
        };
        let mut exp10 = -(frac_part.len() as i32);
        let mut exp2 = 0;
        match suffix {
            "" => {}
            "n" => exp10 -= 9,
            "u" => exp10 -= 6,
            "m" => exp10 -= 3,
            "k" => exp10 += 3,
            "M" => exp10 += 6,
            "G" => exp10 += 9,
            "T" => exp10 += 12,
            "P" => exp10 += 15,
            "E" => exp10 += 18,
            "Ki" => exp2 = 10,
            "Mi" => exp2 = 20,
            "Gi" => exp2 = 30,
            "Ti" => exp2 = 40,
            "Pi" => exp2 = 50,
            "Ei" => exp2 = 60,
            _ => {
                let exponent = suffix.strip_prefix(['e', 'E']).ok_or_else(syntax)?;
                let body = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
                if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) || body.len() > 4 {
                    return Err(syntax());
                }
                exp10 += exponent.parse::<i32>().map_err(|_| syntax())?;
            }
        }
        Ok(Quantity {
            mantissa: if negative { -mantissa } else { mantissa },
            exp10,
            exp2,
        })
    }

    /// The value scaled by `10^scale10`, rounded up, as an i64.
    fn scaled(&self, scale10: i32) -> Result<i64, QuantityError> {
        let range = || QuantityError::Range(self.to_string());
        if self.mantissa == 0 {
            return Ok(0);
        }
        let exp = self.exp10 + scale10;
        if !(-38..=38).contains(&exp) {
            return Err(range());
        }
        let mut num = self.mantissa.checked_mul(1i128 << self.exp2).ok_or_else(range)?;
        let mut den: i128 = 1;
        if exp >= 0 {
            num = num.checked_mul(10i128.pow(exp as u32)).ok_or_else(range)?;
        } else {
            den = 10i128.pow((-exp) as u32);
        }
        let q = num.div_euclid(den) + i128::from(num.rem_euclid(den) != 0);
        i64::try_from(q).map_err(|_| range())
    }

    /// Whole units, rounded up (bytes for memory).
    pub fn value(&self) -> Result<i64, QuantityError> {
        self.scaled(0)
    }

    /// Thousandths, rounded up (millicores for cpu).
    pub fn milli_value(&self) -> Result<i64, QuantityError> {
        self.scaled(3)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}e{}", self.mantissa, self.exp10)?;
        if self.exp2 > 0 {
            write!(f, "*2^{}", self.exp2)?;
        }
        Ok(())
    }
}

/// An IntOrString that is either a count or a percentage (maxSurge, minAvailable, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IntOrPercent {
    Int(i32),
    Percent(i32),
}

impl IntOrPercent {
    /// `25%` → Percent(25). A string without `%` is accepted only if it is a plain integer,
    /// as Kubernetes' `GetScaledValueFromIntOrPercent` rejects it otherwise.
    pub fn parse_percent(s: &str) -> Option<IntOrPercent> {
        match s.strip_suffix('%') {
            Some(p) => p.parse::<i32>().ok().filter(|p| *p >= 0).map(IntOrPercent::Percent),
            None => None,
        }
    }

    /// Resolve against a total, rounding up or down (maxSurge rounds up, maxUnavailable down).
    pub fn scaled(self, total: i32, round_up: bool) -> i32 {
        match self {
            IntOrPercent::Int(i) => i,
            IntOrPercent::Percent(p) => {
                let product = i64::from(p) * i64::from(total);
                let v = if round_up { (product + 99) / 100 } else { product / 100 };
                v as i32
            }
        }
    }
}

impl fmt::Display for IntOrPercent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntOrPercent::Int(i) => write!(f, "{i}"),
            IntOrPercent::Percent(p) => write!(f, "{p}%"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn milli(s: &str) -> i64 {
        Quantity::parse(s).unwrap().milli_value().unwrap()
    }
    fn units(s: &str) -> i64 {
        Quantity::parse(s).unwrap().value().unwrap()
    }

    #[test]
    fn cpu() {
        assert_eq!(milli("500m"), 500);
        assert_eq!(milli("2"), 2000);
        assert_eq!(milli("0.5"), 500);
        assert_eq!(milli(".5"), 500);
        assert_eq!(milli("1."), 1000);
        assert_eq!(milli("1500m"), 1500);
        assert_eq!(milli("100u"), 1); // rounds up
        assert_eq!(milli("1n"), 1);
        assert_eq!(milli("1e3"), 1_000_000);
        assert_eq!(milli("1E-3"), 1);
        assert_eq!(milli("+3"), 3000);
        assert_eq!(milli("0"), 0);
    }

    #[test]
    fn memory() {
        assert_eq!(units("1Gi"), 1 << 30);
        assert_eq!(units("1.5Gi"), 1_610_612_736);
        assert_eq!(units("1536Mi"), 1_610_612_736);
        assert_eq!(units("128974848"), 128_974_848);
        assert_eq!(units("129e6"), 129_000_000);
        assert_eq!(units("123M"), 123_000_000);
        assert_eq!(units("1k"), 1000);
        assert_eq!(units("1Ki"), 1024);
        assert_eq!(units("100m"), 1); // a tenth of a byte rounds up
        assert_eq!(units("1Ei"), 1 << 60);
    }

    #[test]
    fn errors() {
        for bad in [
            "",
            "abc",
            "1.2.3",
            "12 parsecs",
            "1Gb",
            "m",
            "1e",
            "1ee3",
            "--1",
            "1.5.Gi",
        ] {
            assert!(Quantity::parse(bad).is_err(), "{bad}");
        }
        assert!(matches!(
            Quantity::parse("8Ei").unwrap().value(),
            Err(QuantityError::Range(_))
        ));
        assert!(Quantity::parse("1e9999").unwrap().value().is_err());
        assert!(Quantity::parse("1e99999").is_err());
        assert!(Quantity::parse(&"9".repeat(50)).is_err());
    }

    #[test]
    fn negative_quantities_parse() {
        assert_eq!(milli("-1"), -1000);
        assert_eq!(milli("-1n"), 0); // ceil towards +inf
    }

    #[test]
    fn int_or_percent_rounding() {
        assert_eq!(IntOrPercent::Percent(25).scaled(3, true), 1);
        assert_eq!(IntOrPercent::Percent(25).scaled(3, false), 0);
        assert_eq!(IntOrPercent::Percent(50).scaled(5, true), 3);
        assert_eq!(IntOrPercent::Int(2).scaled(10, false), 2);
        assert_eq!(IntOrPercent::parse_percent("25%"), Some(IntOrPercent::Percent(25)));
        assert_eq!(IntOrPercent::parse_percent("25"), None);
        assert_eq!(IntOrPercent::parse_percent("-5%"), None);
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

            /// Any text parses or fails without panicking, and a parsed value converts or
            /// reports a range error.
            #[test]
            fn any_text_parses_or_fails(text in ".{0,40}") {
                if let Ok(q) = Quantity::parse(&text) {
                    let _ = q.value();
                    let _ = q.milli_value();
                }
            }

            /// Decimal millicores: `<n>m` is n, `<n>` is 1000 n, and `<i>.<f>` is exact.
            #[test]
            fn millicores_are_exact(n in 0i64..1_000_000_000, f in 0i64..1000) {
                prop_assert_eq!(Quantity::parse(&format!("{n}m")).unwrap().milli_value().unwrap(), n);
                prop_assert_eq!(Quantity::parse(&format!("{n}")).unwrap().milli_value().unwrap(), n * 1000);
                let text = format!("{n}.{f:03}");
                prop_assert_eq!(Quantity::parse(&text).unwrap().milli_value().unwrap(), n * 1000 + f);
            }

            /// Binary and decimal suffixes scale exactly, and units round up, never down.
            #[test]
            fn suffixes_scale_and_round_up(n in 0i64..1_000_000) {
                for (suffix, factor) in [("Ki", 1i64 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("k", 1000), ("M", 1_000_000)] {
                    prop_assert_eq!(Quantity::parse(&format!("{n}{suffix}")).unwrap().value().unwrap(), n * factor);
                }
                // n millibytes is ceil(n / 1000) bytes.
                prop_assert_eq!(Quantity::parse(&format!("{n}m")).unwrap().value().unwrap(), (n + 999) / 1000);
            }

            /// Values beyond i64 are range errors, never wrapped.
            #[test]
            fn overflow_is_an_error(n in 9u64..1000) {
                let q = Quantity::parse(&format!("{n}Ei")).unwrap();
                prop_assert!(q.value().is_err());
                prop_assert!(q.milli_value().is_err());
            }
        }

        proptest! {
            /// maxSurge rounds up and maxUnavailable down (deployment_util.go ResolveFenceposts):
            /// a percentage p of n is ceil(p n / 100) and floor(p n / 100), and both stay
            /// within a step of the exact value.
            #[test]
            fn percentages_round_up_for_surge_and_down_for_unavailable(p in 0i32..=100, n in 0i32..100_000) {
                let v = IntOrPercent::parse_percent(&format!("{p}%")).unwrap();
                let up = v.scaled(n, true);
                let down = v.scaled(n, false);
                let exact = i64::from(p) * i64::from(n);
                prop_assert_eq!(i64::from(down), exact / 100);
                prop_assert_eq!(i64::from(up), (exact + 99) / 100);
                prop_assert!(i64::from(down) * 100 <= exact && exact <= i64::from(up) * 100);
                prop_assert!(up - down <= 1);
                prop_assert!(up <= n && down >= 0);
                // Counts are taken as they are.
                prop_assert_eq!(IntOrPercent::Int(p).scaled(n, true), p);
            }
        }
    }
}
