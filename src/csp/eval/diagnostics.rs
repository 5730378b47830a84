//! Errors of evaluation: positioned errors, and the names of calls and definitions in them.

use super::*;

impl Evaluator {
    pub(super) fn err(&self, span: Span, kind: ErrorKind, msg: impl Into<String>) -> CspError {
        let msg = brief_message(msg.into());
        if span == Span::default() && self.sources.is_empty() {
            CspError::unpositioned(kind, msg)
        } else {
            CspError::at(&self.sources, span, kind, msg)
        }
    }

    /// `e`, placed at `span` (a call in the script) if it points into the prelude: an error
    /// inside a prelude definition such as `BUFFER` is shown at the script's call.
    pub(super) fn at_call_of_prelude(&self, e: CspError, span: Span) -> CspError {
        let in_prelude = |file: &str| file == "<prelude>";
        let from_prelude = e.location.as_ref().is_some_and(|l| in_prelude(&l.file));
        if !from_prelude || span == Span::default() || self.sources.is_empty() {
            return e;
        }
        let here = self.err(span, e.kind, e.message.clone());
        match &here.location {
            Some(l) if !in_prelude(&l.file) => here,
            _ => e,
        }
    }

    /// `e`, placed at `span` if it has no position yet.
    pub(super) fn at_if_unpositioned(&self, e: CspError, span: Span) -> CspError {
        if e.location.is_some() || span == Span::default() {
            e
        } else {
            self.err(span, e.kind, e.message)
        }
    }

    pub(super) fn internal(&self, what: &str) -> CspError {
        CspError::unpositioned(ErrorKind::Eval, format!("internal error: {what}"))
    }

    /// `f(1, 2)`, or `N` for a constant.
    pub(super) fn show_call(&self, call: &Call) -> String {
        let mut s = self.target_name(&call.target);
        if !call.args.is_empty() {
            let args: Vec<String> = call.args.iter().map(|a| self.show(a)).collect();
            s.push_str(&format!("({})", args.join(", ")));
        }
        s
    }

    /// Where a named definition is.
    pub(super) fn target_span(&self, t: &Target) -> Option<Span> {
        match t {
            Target::Global(i) => Some(self.prog.top.defs[*i as usize].span),
            Target::Let(r, i) => self
                .prog
                .lets
                .get(&r.group)
                .map(|l| l.group.defs[*i as usize].span),
            _ => None,
        }
    }

    pub(super) fn target_name(&self, t: &Target) -> String {
        match t {
            Target::Global(i) => self.prog.top.defs[*i as usize].name.to_string(),
            Target::Let(r, i) => self
                .prog
                .lets
                .get(&r.group)
                .map(|l| l.group.defs[*i as usize].name.to_string())
                .unwrap_or_else(|| "?".into()),
            Target::Lambda(..) => "\\ @".into(),
            Target::Builtin(b) => b.name().into(),
            Target::Compression(c) => (*c).into(),
        }
    }
}

/// Longest message of an evaluation error, in bytes: a value shown whole in a message (a set
/// of millions of elements) is cut there.
pub(super) const MAX_MESSAGE_BYTES: usize = 4096;

/// `msg`, cut after [`MAX_MESSAGE_BYTES`] (at a character boundary) with a note of the length
/// left out.
fn brief_message(mut msg: String) -> String {
    if msg.len() <= MAX_MESSAGE_BYTES {
        return msg;
    }
    let mut cut = MAX_MESSAGE_BYTES;
    while !msg.is_char_boundary(cut) {
        cut -= 1;
    }
    let left_out = msg.len() - cut;
    msg.truncate(cut);
    msg.push_str(&format!("… ({left_out} more bytes)"));
    msg
}
