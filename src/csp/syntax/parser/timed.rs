//! Parsing of timed sections: `Timed(et) { declarations }` and `Timed { declarations }`.

use super::decls::push_decl;
use super::*;

impl Parser<'_> {
    /// Parses a timed section at the `Timed` keyword. The declarations inside are those
    /// allowed where the section is (`top`: the top level; otherwise a `let`, where only
    /// definitions are).
    pub(super) fn parse_timed_section(&mut self, top: bool) -> PResult<TimedSection> {
        let keyword = self.bump().span;
        self.ctx.has_timed = true;
        let et = if self.eat(&Tok::LParen) {
            self.open_bracket();
            let e = self.parse_expr(0);
            self.close_bracket();
            let e = e?;
            self.expect(&Tok::RParen, "`)` after the function of `Timed(...)`")?;
            Some(e)
        } else {
            None
        };
        self.expect(&Tok::LBrace, "`{` opening the timed section")?;
        let mut decls = Vec::new();
        loop {
            match self.peek() {
                Tok::RBrace => break,
                Tok::Eof => return Err(self.unexpected("`}` closing the timed section")),
                // as in FDR (libcspm's parser test `print_statements_timed.csp`)
                Tok::Print => {
                    return Err(RawError::new(
                        self.span(),
                        ErrorKind::Syntax,
                        "`print` is not allowed inside a timed section",
                    ))
                }
                _ => {}
            }
            let d = self.parse_decl(top)?;
            push_decl(&mut decls, d);
            if self.peek() != &Tok::RBrace && !self.at_boundary() {
                return Err(self.unexpected("a new line or `}` closing the timed section"));
            }
        }
        self.expect(&Tok::RBrace, "`}` closing the timed section")?;
        Ok(TimedSection { keyword, et, decls })
    }
}
