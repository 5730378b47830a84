//! Built-in functions: the checks every built-in makes on its arguments, and the dispatch to
//! one function per built-in, grouped by theme (sets, sequences, events).

mod events;
mod maps;
mod priority;
mod relations;
mod seqs;
mod sets;
mod strings;

use super::*;

/// One call of a built-in: the function, its arguments (as many as it takes) and where it is
/// called.
struct BuiltinCall<'a> {
    script: &'a Evaluator,
    b: Builtin,
    args: &'a [Value],
    span: Span,
}

impl BuiltinCall<'_> {
    /// The type error for arguments the built-in does not take: it needs `what`.
    fn bad(&self, what: &str) -> EResult<Value> {
        let shown: Vec<String> = self.args.iter().map(|a| self.script.show(a)).collect();
        Err(self.script.err(
            self.span,
            ErrorKind::Type,
            format!(
                "`{}` needs {what}, given ({})",
                self.b.name(),
                shown.join(", ")
            ),
        ))
    }

    /// An evaluation error at the call.
    fn err(&self, kind: ErrorKind, msg: impl Into<String>) -> CspError {
        self.script.err(self.span, kind, msg)
    }
}

/// The elements of `v` if it is a finite set.
fn as_set(v: &Value) -> Option<Arc<[Value]>> {
    match v {
        Value::Set(s) => Some(s.items().clone()),
        _ => None,
    }
}

impl Evaluator {
    /// Applies the built-in `b` to `args` (called at `span`).
    pub(super) fn builtin(&self, b: Builtin, args: &[Value], span: Span) -> EResult<Value> {
        if args.len() != b.arity() {
            return Err(self.err(
                span,
                ErrorKind::Arity,
                format!(
                    "`{}` takes {} argument(s) but is given {}",
                    b.name(),
                    b.arity(),
                    args.len()
                ),
            ));
        }
        if matches!(
            b,
            Builtin::Member
                | Builtin::Card
                | Builtin::Elem
                | Builtin::Union
                | Builtin::Inter
                | Builtin::Diff
                | Builtin::UnionAll
                | Builtin::InterAll
                | Builtin::SetOfSeq
                | Builtin::SeqOfSet
        ) && args.iter().any(|a| !a.is_comparable())
        {
            return Err(self.err(
                span,
                ErrorKind::Type,
                format!(
                    "`{}` needs comparable values: processes and functions have no equality",
                    b.name()
                ),
            ));
        }
        let c = BuiltinCall {
            script: self,
            b,
            args,
            span,
        };
        match b {
            Builtin::Union | Builtin::Inter | Builtin::Diff => sets::union_inter_diff(&c),
            Builtin::UnionAll | Builtin::InterAll => sets::union_inter_all(&c),
            Builtin::Member => sets::member(&c),
            Builtin::Card => sets::card(&c),
            Builtin::Empty => sets::empty(&c),
            Builtin::SetOfSeq => seqs::set_of_seq(&c),
            Builtin::SeqOfSet => seqs::seq_of_set(&c),
            Builtin::Powerset => sets::powerset(&c),
            Builtin::Head | Builtin::Tail => seqs::head_tail(&c),
            Builtin::Concat => seqs::concat(&c),
            Builtin::Null => seqs::null(&c),
            Builtin::Elem => seqs::elem(&c),
            Builtin::Length => seqs::length(&c),
            Builtin::Productions => events::productions(&c),
            Builtin::Extensions => events::extensions(&c),
            Builtin::SeqType => sets::seq_type(&c),
            Builtin::Show => strings::show(&c),
            Builtin::Error => strings::error(&c),
            Builtin::MapType => maps::map_type(&c),
            Builtin::MapFromList => maps::from_list(&c),
            Builtin::MapToList => maps::to_list(&c),
            Builtin::MapLookup => maps::lookup(&c),
            Builtin::MapMember => maps::member(&c),
            Builtin::MapUpdate => maps::update(&c),
            Builtin::MapUpdateMultiple => maps::update_multiple(&c),
            Builtin::MapDelete => maps::delete(&c),
            Builtin::Transpose => relations::transpose(&c),
            Builtin::RelationalImage | Builtin::RelationalInverseImage => {
                relations::image_function(&c)
            }
            Builtin::Mtransclose => relations::mtransclose(&c),
            Builtin::Loop => relations::loop_process(&c),
            Builtin::Prioritise => priority::prioritise(&c),
            Builtin::PrioritisePo => priority::prioritise_po(&c),
        }
    }

    /// Applies the function a built-in returned (`relational_image(R)`) to `args`:
    /// `applied` is the argument the built-in was given.
    pub(super) fn builtin_result(
        &self,
        b: Builtin,
        applied: &[Value],
        args: &[Value],
        span: Span,
    ) -> EResult<Value> {
        let c = BuiltinCall {
            script: self,
            b,
            args,
            span,
        };
        match (b, applied, args) {
            (Builtin::RelationalImage | Builtin::RelationalInverseImage, [r], [_]) => {
                relations::image(&c, r)
            }
            _ => Err(self.err(
                span,
                ErrorKind::Arity,
                format!("the function {} takes one argument", b.name()),
            )),
        }
    }
}
