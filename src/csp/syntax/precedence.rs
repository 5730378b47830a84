//! Operator precedence: the binding strength of each operator, loosest first, as the parser
//! and the printer use it (the order is FDR's; see [`parser`](super::parser) for its sources).

use super::ast::*;

pub(crate) const L_HIDE: u8 = 1;
pub(crate) const L_INTERLEAVE: u8 = 2;
pub(crate) const L_PAR: u8 = 3;
pub(crate) const L_INTCHOICE: u8 = 4;
pub(crate) const L_EXTCHOICE: u8 = 5;
pub(crate) const L_INTERRUPT: u8 = 6;
pub(crate) const L_TIMEOUT: u8 = 7;
pub(crate) const L_SEQ: u8 = 8;
pub(crate) const L_PREFIX: u8 = 9;
pub(crate) const L_FIELD: u8 = 10;
pub(crate) const L_DOT: u8 = 11;
/// `@@` (patterns only): tighter than `.`, looser than the value operators.
pub(crate) const L_BOTH: u8 = 12;
pub(crate) const L_OR: u8 = 13;
pub(crate) const L_AND: u8 = 14;
pub(crate) const L_NOT: u8 = 15;
pub(crate) const L_CMP: u8 = 16;
pub(crate) const L_ADD: u8 = 17;
pub(crate) const L_MUL: u8 = 18;
pub(crate) const L_HASH: u8 = 19;
pub(crate) const L_CAT: u8 = 20;
pub(crate) const L_APP: u8 = 21;

/// Binding strength of an expression's top operator (used by the pretty-printer).
pub fn expr_level(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Proc(op, ..) => match op {
            ProcOp::Interleave => L_INTERLEAVE,
            ProcOp::IntChoice => L_INTCHOICE,
            ProcOp::ExtChoice => L_EXTCHOICE,
            ProcOp::Interrupt => L_INTERRUPT,
            ProcOp::Timeout => L_TIMEOUT,
            ProcOp::Seq => L_SEQ,
        },
        ExprKind::Parallel(..) | ExprKind::AlphaParallel(..) | ExprKind::Link(..) => L_PAR,
        ExprKind::Hide(..) | ExprKind::Project(..) => L_HIDE,
        ExprKind::SetProc(op, ..) => match op {
            SetProcOp::Exception => L_PAR,
            SetProcOp::SyncExtChoice => L_EXTCHOICE,
            SetProcOp::SyncInterrupt => L_INTERRUPT,
        },
        ExprKind::Prefix(_) | ExprKind::Guard(..) => L_PREFIX,
        ExprKind::Dot(..) => L_DOT,
        ExprKind::Binary(op, ..) => match op {
            BinOp::Or => L_OR,
            BinOp::And => L_AND,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => L_CMP,
            BinOp::Add | BinOp::Sub => L_ADD,
            BinOp::Mul | BinOp::Div | BinOp::Mod => L_MUL,
            BinOp::Concat => L_CAT,
            BinOp::Both => L_BOTH,
        },
        ExprKind::Unary(UnOp::Not, _) => L_NOT,
        ExprKind::Unary(UnOp::Neg, _) => L_ADD,
        ExprKind::Unary(UnOp::Len, _) => L_HASH,
        ExprKind::If(..) | ExprKind::Let(_) | ExprKind::Lambda(_) | ExprKind::Replicated(..) => 0,
        ExprKind::Timed(t) => match &t.form {
            TimedForm::Prefix(x) | TimedForm::Operator(x) => expr_level(x),
            _ => L_APP + 1,
        },
        _ => L_APP + 1,
    }
}
