//! Built-ins on text: `show` and `error`.

use super::*;

/// The text of a string value (a sequence of characters), if it is one.
fn string_text(v: &Value) -> Option<String> {
    match v {
        Value::Seq(items) => items
            .iter()
            .map(|c| match c {
                Value::Char(c) => Some(*c),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// `show(x)`: the value as FDR prints it, as a string.
pub(super) fn show(c: &BuiltinCall) -> EResult<Value> {
    Ok(Value::string(&c.script.show(&c.args[0])))
}

/// `error(s)`: an evaluation error at the call, with the message `s` (a string is shown as
/// its text, any other value as FDR prints it).
pub(super) fn error(c: &BuiltinCall) -> EResult<Value> {
    let text = string_text(&c.args[0]).unwrap_or_else(|| c.script.show(&c.args[0]));
    Err(c.err(ErrorKind::Eval, format!("Error: {text}")))
}
