//! Valid input a YAML parser rejects but Kubernetes reads: several concatenated JSON
//! objects, and a double-quoted scalar continued on less-indented lines (as `kubectl get -o
//! yaml` writes long messages).

/// The byte ranges of the top-level JSON objects or arrays of `text`, if it is nothing but
/// such values separated by whitespace.
pub(super) fn json_values(text: &str) -> Option<Vec<(usize, usize)>> {
    let bytes = text.as_bytes();
    let mut values = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if bytes[i] != b'{' && bytes[i] != b'[' {
            return None;
        }
        let start = i;
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        loop {
            let &b = bytes.get(i)?;
            i += 1;
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        values.push((start, i));
    }
    Some(values)
}

/// The text with the continuation lines of the double-quoted scalar that opens at `line`,
/// `column` (1-based) indented past its opening quote; `None` if no such scalar is there.
pub(super) fn indent_quoted_continuation(text: &str, line: usize, column: usize) -> Option<String> {
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    let open = lines.get(line - 1)?;
    let quote = open.char_indices().nth(column.checked_sub(1)?)?.0;
    if !open[quote..].starts_with('"') {
        return None;
    }
    // Find the closing quote: backslash escapes, possibly lines later.
    let mut escaped = false;
    let mut close_line = None;
    let mut from = quote + 1;
    for (k, l) in lines.iter().enumerate().skip(line - 1) {
        let rest = if k == line - 1 { &l[from..] } else { l.as_str() };
        for c in rest.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    close_line = Some(k);
                    break;
                }
                _ => {}
            }
        }
        if close_line.is_some() {
            break;
        }
        escaped = false;
        from = 0;
    }
    let close_line = close_line?;
    let width = open[..quote].chars().count() + 1;
    let mut changed = false;
    for l in lines.iter_mut().take(close_line + 1).skip(line) {
        let indent = l.len() - l.trim_start_matches(' ').len();
        if indent < width && !l.trim().is_empty() {
            *l = format!("{}{l}", " ".repeat(width - indent));
            changed = true;
        }
    }
    changed.then(|| lines.join("\n"))
}

/// Whether line `line` (1-based) starts inside an unclosed `[` or `{` (quotes and comments
/// skipped), judged from the text before it.
pub(super) fn inside_flow_collection(text: &str, line: usize) -> bool {
    let mut depth: i32 = 0;
    for l in text.split('\n').take(line.saturating_sub(1)) {
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        for c in l.chars() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    '#' if prev == ' ' || prev == '\t' => break,
                    '"' | '\'' if depth > 0 || matches!(prev, ' ' | ':' | '[' | '{' | ',') => quote = Some(c),
                    '[' | '{' => depth += 1,
                    ']' | '}' => depth = (depth - 1).max(0),
                    _ => {}
                },
            }
            prev = c;
        }
    }
    depth > 0
}
