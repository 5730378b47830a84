//! The syntax of one line of an `.aut` file: the `des` header and a transition, parsed by
//! hand; a failure names the byte position and what was expected there.

/// The declared figures of the `des` line.
#[derive(Clone, Copy)]
pub(super) struct Header {
    pub(super) initial: u32,
    pub(super) transitions: u64,
    pub(super) states: u32,
    /// Byte ranges of the initial state and of the number of transitions in the line.
    pub(super) initial_at: (usize, usize),
    pub(super) transitions_at: (usize, usize),
}

/// A parse failure inside one line: the byte position and what was expected there.
pub(super) struct Fail {
    pub(super) pos: usize,
    pub(super) expected: &'static str,
}

/// The byte range of the first number of a transition line (its source state), `first`
/// being the position of its `(`.
#[cold]
pub(super) fn first_number(line: &[u8], first: usize) -> (usize, usize) {
    let lo = skip_ws(line, first + 1);
    let hi = lo + line[lo..].iter().take_while(|b| b.is_ascii_digit()).count();
    (lo, hi)
}

/// The byte range of the last number of a well-formed transition line (its target state).
#[cold]
pub(super) fn last_number(line: &[u8]) -> (usize, usize) {
    let close = line.iter().rposition(|&b| b == b')').unwrap_or(line.len());
    let mut hi = close;
    while hi > 0 && matches!(line[hi - 1], b' ' | b'\t' | b'\r') {
        hi -= 1;
    }
    let lo = hi
        - line[..hi]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
    (lo, hi)
}

#[inline]
pub(super) fn skip_ws(line: &[u8], mut pos: usize) -> usize {
    while pos < line.len() && matches!(line[pos], b' ' | b'\t' | b'\r') {
        pos += 1;
    }
    pos
}

#[inline]
pub(super) fn expect(
    line: &[u8],
    pos: usize,
    byte: u8,
    expected: &'static str,
) -> Result<usize, Fail> {
    if line.get(pos) == Some(&byte) {
        Ok(pos + 1)
    } else {
        Err(Fail { pos, expected })
    }
}

/// Parses a decimal number of at most `u32::MAX`; returns it and the position after it.
#[inline]
pub(super) fn parse_u32(
    line: &[u8],
    pos: usize,
    expected: &'static str,
) -> Result<(u32, usize), Fail> {
    let (n, end) = parse_u64(line, pos, expected)?;
    match u32::try_from(n) {
        Ok(n) => Ok((n, end)),
        Err(_) => Err(Fail {
            pos,
            expected: "a number below 2^32",
        }),
    }
}

#[inline]
pub(super) fn parse_u64(
    line: &[u8],
    pos: usize,
    expected: &'static str,
) -> Result<(u64, usize), Fail> {
    let mut at = pos;
    let mut n: u64 = 0;
    while let Some(&b) = line.get(at) {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        n = match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(digit)))
        {
            Some(n) => n,
            None => {
                return Err(Fail {
                    pos,
                    expected: "a number below 2^64",
                })
            }
        };
        at += 1;
    }
    if at == pos {
        return Err(Fail { pos, expected });
    }
    Ok((n, at))
}

pub(super) fn parse_header(line: &[u8]) -> Result<Header, Fail> {
    // A UTF-8 byte-order mark (written by some editors) before the header is skipped.
    let bom = if line.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let pos = skip_ws(line, bom);
    if !line[pos..].starts_with(b"des") {
        return Err(Fail {
            pos,
            expected: "the header 'des (initial, transitions, states)'",
        });
    }
    let pos = skip_ws(line, pos + 3);
    let pos = skip_ws(line, expect(line, pos, b'(', "'(' after 'des'")?);
    let initial_start = pos;
    let (initial, pos) = parse_u32(line, pos, "the initial state")?;
    let initial_at = (initial_start, pos);
    let pos = skip_ws(line, pos);
    let pos = skip_ws(
        line,
        expect(line, pos, b',', "',' after the initial state")?,
    );
    let transitions_start = pos;
    let (transitions, pos) = parse_u64(line, pos, "the number of transitions")?;
    let transitions_at = (transitions_start, pos);
    let pos = skip_ws(line, pos);
    let pos = skip_ws(
        line,
        expect(line, pos, b',', "',' after the number of transitions")?,
    );
    let (states, pos) = parse_u32(line, pos, "the number of states")?;
    let pos = skip_ws(line, pos);
    let pos = skip_ws(
        line,
        expect(line, pos, b')', "')' after the number of states")?,
    );
    if pos != line.len() {
        return Err(Fail {
            pos,
            expected: "the end of the header line",
        });
    }
    Ok(Header {
        initial,
        transitions,
        states,
        initial_at,
        transitions_at,
    })
}

/// Parses `(from, label, to)` starting at `pos` (the first non-blank byte); returns the label
/// unquoted (or trimmed, if bare).
#[inline]
pub(super) fn parse_transition(line: &[u8], pos: usize) -> Result<(u32, &[u8], u32), Fail> {
    let pos = skip_ws(line, expect(line, pos, b'(', "'(' starting a transition")?);
    let (from, pos) = parse_u32(line, pos, "the source state")?;
    let pos = skip_ws(line, pos);
    let pos = skip_ws(line, expect(line, pos, b',', "',' after the source state")?);
    let mut first_fail: Option<Fail> = None;
    if line.get(pos) == Some(&b'"') {
        // The label ends at the first '"' after which the rest of the line parses.
        let mut search = pos + 1;
        while let Some(close) = line[search..].iter().position(|&b| b == b'"') {
            let close = search + close;
            match parse_tail(line, close + 1) {
                Ok(to) => return Ok((from, &line[pos + 1..close], to)),
                Err(fail) => {
                    first_fail.get_or_insert(fail);
                }
            }
            search = close + 1;
        }
        Err(first_fail.unwrap_or(Fail {
            pos: line.len(),
            expected: "'\"' closing the label",
        }))
    } else {
        // A bare label ends at the first ',' after which the rest of the line parses.
        let mut search = pos;
        while let Some(comma) = line[search..].iter().position(|&b| b == b',') {
            let comma = search + comma;
            let mut end = comma;
            while end > pos && matches!(line[end - 1], b' ' | b'\t' | b'\r') {
                end -= 1;
            }
            if end == pos {
                return Err(Fail {
                    pos,
                    expected: "a label",
                });
            }
            match parse_tail(line, comma) {
                Ok(to) => return Ok((from, &line[pos..end], to)),
                Err(fail) => {
                    first_fail.get_or_insert(fail);
                }
            }
            search = comma + 1;
        }
        Err(first_fail.unwrap_or(Fail {
            pos: line.len(),
            expected: if pos == line.len() {
                "a label"
            } else {
                "',' after the label"
            },
        }))
    }
}

/// Parses `, to)` and the end of the line, starting right after the label.
#[inline]
pub(super) fn parse_tail(line: &[u8], pos: usize) -> Result<u32, Fail> {
    let pos = skip_ws(line, pos);
    let pos = skip_ws(line, expect(line, pos, b',', "',' after the label")?);
    let (to, pos) = parse_u32(line, pos, "the target state")?;
    let pos = skip_ws(line, pos);
    let pos = skip_ws(line, expect(line, pos, b')', "')' closing the transition")?);
    if pos == line.len() {
        Ok(to)
    } else {
        Err(Fail {
            pos,
            expected: "the end of the line after ')'",
        })
    }
}
