//! Writing an LTS in `.aut` format.

use std::io::{self, Write};

use crate::lts::Lts;
use crate::ts::TAU;

/// Writes `lts` in `.aut` format (mCRL2's layout: every label quoted, tau as `"tau"`),
/// transitions grouped by source state. Fails with `InvalidInput` if a label name contains a
/// newline (`\n`: the format cannot express it; labels read by [`read_aut`] never do).
pub fn write_aut<W: Write>(lts: &Lts, mut w: W) -> io::Result<()> {
    let mut quoted: Vec<Vec<u8>> = Vec::with_capacity(lts.label_names().len());
    for (id, name) in lts.label_names().iter().enumerate() {
        let name = if id == TAU as usize { "tau" } else { name };
        if name.contains('\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("label {name:?} contains a newline"),
            ));
        }
        let mut q = Vec::with_capacity(name.len() + 2);
        q.push(b'"');
        q.extend_from_slice(name.as_bytes());
        q.push(b'"');
        quoted.push(q);
    }
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"des (");
    push_decimal(&mut buf, u64::from(lts.initial()));
    buf.push(b',');
    push_decimal(&mut buf, lts.num_transitions());
    buf.push(b',');
    push_decimal(&mut buf, u64::from(lts.num_states()));
    buf.extend_from_slice(b")\n");
    for (s, l, t) in lts.transitions() {
        buf.push(b'(');
        push_decimal(&mut buf, u64::from(s));
        buf.push(b',');
        buf.extend_from_slice(&quoted[l as usize]);
        buf.push(b',');
        push_decimal(&mut buf, u64::from(t));
        buf.extend_from_slice(b")\n");
        if buf.len() >= (1 << 16) - 64 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.flush()
}

fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}
