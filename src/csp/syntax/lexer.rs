//! The CSPm lexer: source text to tokens with spans.
//!
//! Comments (`--` to the end of the line, nested `{- -}`) and white space are skipped; each
//! token records whether a line break separates it from the previous token. Whether that line
//! break ends a declaration is decided as libcspm does it: a line break is ignored after a
//! token that cannot end an expression (binary operators, opening brackets, `=`, ...) and
//! before a token that cannot start one (binary operators, closing brackets, `then`, ...).
//! See [`Tok::continues_after`] and [`Tok::continues_before`].
//!
//! One extension: `\\` is read as the hiding operator `\` (the itdojp/cspx problems write
//! hiding that way; in FDR it is a syntax error, so no valid script is read differently).

use super::source::Span;
use crate::csp::error::{ErrorKind, RawError};

pub use super::tokens::{Model, Tok, Token};

fn keyword(s: &str) -> Option<Tok> {
    use Tok::*;
    Some(match s {
        "channel" => Channel,
        "datatype" => Datatype,
        "nametype" => Nametype,
        "subtype" => Subtype,
        "assert" => Assert,
        "include" => Include,
        "transparent" => Transparent,
        "external" => External,
        "module" => Module,
        "exports" => Exports,
        "endmodule" => EndModule,
        "instance" => Instance,
        "Timed" => Timed,
        "print" => Print,
        "if" => If,
        "then" => Then,
        "else" => Else,
        "let" => Let,
        "within" => Within,
        "and" => And,
        "or" => Or,
        "not" => Not,
        "true" => True,
        "false" => False,
        _ => return None,
    })
}

/// Splits `text` (file number `file`) into tokens; the last token is [`Tok::Eof`].
///
/// Malformed text becomes a [`Tok::Error`] token and lexing continues after it (an
/// unterminated `{-` comment runs to the end of the file).
pub(crate) fn lex(file: u32, text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out: Vec<Token> = Vec::new();
    // A byte-order mark (written by some editors) opens the text: skipped as white space.
    let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut newline = false;
    let span = |lo: usize, hi: usize| Span {
        file,
        lo: lo as u32,
        hi: hi as u32,
    };
    while i < bytes.len() {
        let c = bytes[i];
        // white space and comments
        if c == b'\n' {
            newline = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'-' && bytes.get(i + 1) == Some(&b'-') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'{' && bytes.get(i + 1) == Some(&b'-') {
            let start = i;
            let mut depth = 1usize;
            i += 2;
            while depth > 0 {
                if i >= bytes.len() {
                    out.push(Token {
                        tok: Tok::Error("unterminated comment `{-` (expected `-}`)".into()),
                        span: span(start, start + 2),
                        newline_before: newline,
                        line_start: start == 0 || bytes[start - 1] == b'\n',
                    });
                    break;
                }
                if bytes[i] == b'{' && bytes.get(i + 1) == Some(&b'-') {
                    depth += 1;
                    i += 2;
                } else if bytes[i] == b'-' && bytes.get(i + 1) == Some(&b'}') {
                    depth -= 1;
                    i += 2;
                } else {
                    if bytes[i] == b'\n' {
                        newline = true;
                    }
                    i += 1;
                }
            }
            continue;
        }
        let start = i;
        let tok = if c.is_ascii_alphabetic() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            while i < bytes.len() && bytes[i] == b'\'' {
                i += 1;
            }
            let word = &text[start..i];
            keyword(word).unwrap_or_else(|| Tok::Ident(word.to_string()))
        } else if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let digits = &text[start..i];
            match digits.parse::<i64>() {
                Ok(v) => Tok::Int(v),
                Err(_) => Tok::Error(format!("integer literal `{digits}` is too large")),
            }
        } else if c == b'"' {
            i += 1;
            let mut s = String::new();
            let mut closed = true;
            loop {
                match bytes.get(i) {
                    None | Some(b'\n') => {
                        closed = false;
                        break;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if i + 1 < bytes.len() && bytes[i + 1] != b'\n' => {
                        let ch = text[i + 1..].chars().next().unwrap_or('\\');
                        s.push(unescape(ch));
                        i += 1 + ch.len_utf8();
                    }
                    Some(_) => {
                        let ch = text[i..].chars().next().unwrap_or('?');
                        s.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            if closed {
                Tok::Str(s)
            } else {
                Tok::Error("unterminated string literal (expected `\"`)".into())
            }
        } else if c == b'\'' {
            // character literal: 'c' or '\c'
            i += 1;
            let escaped = bytes.get(i) == Some(&b'\\');
            if escaped {
                i += 1;
            }
            let ch = text.get(i..).and_then(|t| t.chars().next());
            if let Some(ch) = ch {
                i += ch.len_utf8();
            }
            match ch {
                Some(ch) if bytes.get(i) == Some(&b'\'') && (escaped || ch != '\n') => {
                    i += 1;
                    Tok::Char(if escaped { unescape(ch) } else { ch })
                }
                _ => {
                    i = i.min(bytes.len());
                    Tok::Error("malformed character literal (expected `'c'`)".into())
                }
            }
        } else if c == b':' && bytes.get(i + 1) == Some(&b'[') {
            i += 2;
            match lex_property(text, &mut i, start, file) {
                Ok(t) => t,
                Err(e) => {
                    i = i.max(e.span.hi as usize).min(bytes.len());
                    Tok::Error(e.message)
                }
            }
        } else {
            match lex_symbol(&text[i..]) {
                Some((tok, len)) => {
                    i += len;
                    tok
                }
                None => {
                    let ch = text[i..].chars().next().unwrap_or('?');
                    i += ch.len_utf8();
                    Tok::Error(format!("unexpected character `{}`", ch.escape_default()))
                }
            }
        };
        out.push(Token {
            tok,
            span: span(start, i),
            newline_before: newline,
            line_start: start == 0 || bytes[start - 1] == b'\n',
        });
        newline = false;
    }
    out.push(Token {
        tok: Tok::Eof,
        span: span(bytes.len(), bytes.len()),
        newline_before: true,
        line_start: true,
    });
    out
}

/// Lexes the rest of `:[ ... ]` (and a following `:`), starting after `:[`.
fn lex_property(text: &str, i: &mut usize, start: usize, file: u32) -> Result<Tok, RawError> {
    let bytes = text.as_bytes();
    let err = |hi: usize, msg: &str| {
        RawError::new(
            Span {
                file,
                lo: start as u32,
                hi: hi as u32,
            },
            ErrorKind::Syntax,
            msg.to_string(),
        )
    };
    let name_start = *i;
    while *i < bytes.len() && bytes[*i] != b'[' && bytes[*i] != b']' && bytes[*i] != b'\n' {
        *i += 1;
    }
    let raw = &text[name_start..*i];
    let name = raw
        .replace('-', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let mut model = None;
    if bytes.get(*i) == Some(&b'[') {
        *i += 1;
        let m_start = *i;
        while *i < bytes.len() && bytes[*i] != b']' && bytes[*i] != b'\n' {
            *i += 1;
        }
        model = Some(text[m_start..*i].trim().to_string());
        if bytes.get(*i) != Some(&b']') {
            return Err(err(
                *i,
                "malformed assertion property: expected `]` after the model",
            ));
        }
        *i += 1;
        while *i < bytes.len() && (bytes[*i] == b' ' || bytes[*i] == b'\t') {
            *i += 1;
        }
    }
    if bytes.get(*i) != Some(&b']') {
        return Err(err(
            *i,
            "malformed assertion property: expected `]` (as in `:[deadlock free [F]]`)",
        ));
    }
    *i += 1;
    if bytes.get(*i) == Some(&b':') && bytes.get(*i + 1) != Some(&b'[') {
        *i += 1;
    }
    Ok(Tok::Property { name, model })
}

/// The character an escape `\c` stands for (`\n`, `\t`, `\r`, `\0`; any other character
/// stands for itself, so `\\`, `\'` and `\"` are the backslash and the quotes).
fn unescape(c: char) -> char {
    match c {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        other => other,
    }
}

/// The symbol token at the start of `s` and its length in bytes (longest match).
fn lex_symbol(s: &str) -> Option<(Tok, usize)> {
    use Tok::*;
    // Refinement tokens first: `[T=` etc. (but not `[T==`).
    if let Some(rest) = s.strip_prefix('[') {
        for model in Model::ALL {
            let letters = model.letters();
            if let Some(after) = rest.strip_prefix(letters) {
                if after.starts_with('=') && !after.starts_with("==") {
                    return Some((Refines(model), 2 + letters.len()));
                }
            }
        }
    }
    // `<` followed only by white space and `>` is the empty sequence.
    if let Some(rest) = s.strip_prefix('<') {
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        if trimmed.starts_with('>') && !trimmed.starts_with(">=") {
            return Some((EmptySeq, s.len() - trimmed.len() + 1));
        }
    }
    const TABLE: &[(&str, Tok)] = &[
        ("|||", Interleave),
        ("|~|", IntChoice),
        ("<->", Tie),
        ("[[", LRename),
        ("]]", RRename),
        ("[|", LPar),
        ("|]", RPar),
        ("{|", LPipeBrace),
        ("|}", RPipeBrace),
        ("[]", ExtChoice),
        ("[>", Timeout),
        ("[+", LSyncExt),
        ("+]", RSyncExt),
        ("/+", LSyncInt),
        ("+\\", RSyncInt),
        ("|>", RException),
        ("|\\", Project),
        ("||", Parallel),
        ("/\\", Interrupt),
        ("\\\\", Backslash),
        ("->", Arrow),
        ("=>", FatArrow),
        ("<-", DrawFrom),
        ("<=", LtEq),
        (">=", GtEq),
        ("==", EqEq),
        ("!=", NotEq),
        ("..", DotDot),
        ("::", ColonColon),
        ("@@", AtAt),
        ("(", LParen),
        (")", RParen),
        ("{", LBrace),
        ("}", RBrace),
        ("[", LBrack),
        ("]", RBrack),
        (",", Comma),
        (".", Dot),
        ("?", Question),
        ("!", Bang),
        ("$", Dollar),
        (":", Colon),
        ("|", Pipe),
        ("@", At),
        ("_", Underscore),
        ("\\", Backslash),
        ("=", Define),
        ("<", Lt),
        (">", Gt),
        ("+", Plus),
        ("-", Minus),
        ("*", Star),
        ("/", Slash),
        ("%", Percent),
        ("^", Caret),
        ("#", Hash),
        ("&", Amp),
        (";", Semi),
    ];
    TABLE
        .iter()
        .find(|(text, _)| s.starts_with(text))
        .map(|(text, tok)| (tok.clone(), text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(0, s).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn operators_longest_match() {
        assert_eq!(
            toks("a[]b|~|c|||d[|e|]f<->g<-h->i"),
            vec![
                Tok::Ident("a".into()),
                Tok::ExtChoice,
                Tok::Ident("b".into()),
                Tok::IntChoice,
                Tok::Ident("c".into()),
                Tok::Interleave,
                Tok::Ident("d".into()),
                Tok::LPar,
                Tok::Ident("e".into()),
                Tok::RPar,
                Tok::Ident("f".into()),
                Tok::Tie,
                Tok::Ident("g".into()),
                Tok::DrawFrom,
                Tok::Ident("h".into()),
                Tok::Arrow,
                Tok::Ident("i".into()),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn comments_nest_and_count_newlines() {
        let t = lex(0, "a {- x {- y -} \n z -} b -- c\nd");
        assert_eq!(t[1].tok, Tok::Ident("b".into()));
        assert!(t[1].newline_before);
        assert!(t[2].newline_before);
        assert!(matches!(lex(0, "{- {- -}")[0].tok, Tok::Error(_)));
    }

    #[test]
    fn bad_text_becomes_an_error_token_and_lexing_goes_on() {
        let t = lex(0, "a ` b\n  c 99999999999999999999\nd \"x\n");
        assert_eq!(t[0].tok, Tok::Ident("a".into()));
        assert_eq!(t[1].tok, Tok::Error("unexpected character ```".into()));
        assert_eq!((t[1].span.lo, t[1].span.hi), (2, 3));
        assert_eq!(t[2].tok, Tok::Ident("b".into()));
        assert!(t[3].newline_before && !t[3].line_start);
        assert!(matches!(&t[4].tok, Tok::Error(m) if m.contains("too large")));
        assert!(t[5].line_start);
        assert!(matches!(&t[6].tok, Tok::Error(m) if m.contains("unterminated string")));
        assert_eq!(t[7].tok, Tok::Eof);
    }

    #[test]
    fn refinement_and_properties() {
        assert_eq!(
            toks("P [FD= Q :[deadlock free [F]] :[ divergence-free ]"),
            vec![
                Tok::Ident("P".into()),
                Tok::Refines(Model::FailuresDivergences),
                Tok::Ident("Q".into()),
                Tok::Property {
                    name: "deadlock free".into(),
                    model: Some("F".into())
                },
                Tok::Property {
                    name: "divergence free".into(),
                    model: None
                },
                Tok::Eof
            ]
        );
    }

    #[test]
    fn empty_sequence_and_primes() {
        assert_eq!(
            toks("< > x' <>"),
            vec![
                Tok::EmptySeq,
                Tok::Ident("x'".into()),
                Tok::EmptySeq,
                Tok::Eof
            ]
        );
    }
}
