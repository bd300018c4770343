//! Scalars resolved as go-yaml v2 does (YAML 1.1: `on` is true, `0644` is 420).

use super::*;

/// Resolve a scalar as go-yaml v2 does (YAML 1.1 core types).
pub(super) fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    if let Some(tag) = tag
        && tag.handle == "tag:yaml.org,2002:"
    {
        return match tag.suffix.as_str() {
            "str" | "binary" | "timestamp" => Value::Str(text.to_string()),
            "null" => Value::Null,
            "bool" => resolve_plain(text)
                .filter_bool()
                .unwrap_or(Value::Str(text.to_string())),
            "int" => match resolve_plain(text) {
                v @ Value::Int(_) => v,
                _ => Value::Str(text.to_string()),
            },
            "float" => match resolve_plain(text) {
                Value::Int(i) => Value::Float(i as f64),
                v @ Value::Float(_) => v,
                _ => Value::Str(text.to_string()),
            },
            _ => Value::Str(text.to_string()),
        };
    }
    if style != ScalarStyle::Plain || tag.is_some() {
        return Value::Str(text.to_string());
    }
    resolve_plain(text)
}

pub(super) trait FilterBool {
    fn filter_bool(self) -> Option<Value>;
}

impl FilterBool for Value {
    fn filter_bool(self) -> Option<Value> {
        matches!(self, Value::Bool(_)).then_some(self)
    }
}

pub fn resolve_plain(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Value::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Value::Bool(false);
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Value::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return Value::Str(text.to_string());
    }
    if let Some(i) = parse_int(text) {
        return i;
    }
    if is_float(text)
        && let Ok(f) = text.replace('_', "").parse::<f64>()
    {
        return Value::Float(f);
    }
    Value::Str(text.to_string())
}

/// go-yaml v2 integers: decimal, `0b`, `0x` and leading-zero octal, with `_` separators.
pub(super) fn parse_int(text: &str) -> Option<Value> {
    let (negative, body) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let plain = body.replace('_', "");
    if plain.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(h) = plain.strip_prefix("0x") {
        (h.to_string(), 16)
    } else if let Some(b) = plain.strip_prefix("0b") {
        (b.to_string(), 2)
    } else if plain.len() > 1 && plain.starts_with('0') {
        (plain[1..].to_string(), 8)
    } else {
        (plain.clone(), 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(&digits, radix).ok()?;
    let signed = if negative { -magnitude } else { magnitude };
    match i64::try_from(signed) {
        Ok(i) => Some(Value::Int(i)),
        // Too large for int64: go-yaml falls back to a float.
        Err(_) => Some(Value::Float(signed as f64)),
    }
}

pub(super) fn is_float(text: &str) -> bool {
    // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    let b = text.replace('_', "");
    let b = b.strip_prefix(['-', '+']).unwrap_or(&b);
    let (mantissa, exponent) = match b.find(['e', 'E']) {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => !frac.is_empty() && frac.bytes().all(|c| c.is_ascii_digit()),
        Some((int, frac)) => {
            !int.is_empty() && int.bytes().all(|c| c.is_ascii_digit()) && frac.bytes().all(|c| c.is_ascii_digit())
        }
        None => !mantissa.is_empty() && mantissa.bytes().all(|c| c.is_ascii_digit()),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|c| c.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}
