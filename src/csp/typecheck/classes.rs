//! The type classes of CSPm, and the marks the checker keeps beside them on a flexible type
//! variable (whether libcspm may know it as a dotted value, the fewest fields of the dotted
//! value it stands for, whether it is the first field of a value with fields left).

/// A type class of CSPm (libcspm's `Eq`, `Ord`, `Set`, `Yieldable`, `Complete`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    Eq,
    Ord,
    Set,
    Yieldable,
    Complete,
}

impl Class {
    /// The class named `name`, if there is one.
    pub(super) fn from_name(name: &str) -> Option<Class> {
        Some(match name {
            "Eq" => Class::Eq,
            "Ord" => Class::Ord,
            "Set" => Class::Set,
            "Yieldable" => Class::Yieldable,
            "Complete" => Class::Complete,
            _ => return None,
        })
    }

    pub(super) fn bit(self) -> u16 {
        1 << (self as u16)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Class::Eq => "Eq",
            Class::Ord => "Ord",
            Class::Set => "Set",
            Class::Yieldable => "Yieldable",
            Class::Complete => "Complete",
        }
    }
}

/// A set of type classes, and (for a flexible variable) whether libcspm may give it a
/// dotted type weft does not see (see [`Classes::MAYBE_DOTTED`]), the fewest fields of a
/// dotted value it stands for ([`Classes::DOT_PARTS`]) and whether it is the first field
/// of a value that has fields left ([`Classes::FIRST_FIELD`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Classes(u16);

impl Classes {
    /// Not a class: marks a variable that met something weft types loosely ([`Ty::Any`],
    /// a dotted value or pattern it does not split, a field of a prefix), so libcspm may
    /// know it as a dotted value (`Int.Int`), which fills several fields of an event. The
    /// shortest-match rule (`Checker::check_shortest_matches`) leaves such a variable alone.
    pub(super) const MAYBE_DOTTED: u16 = 1 << 7;

    /// Not a class: two bits holding `n - 1` for a variable that is the type of a dot
    /// pattern of `n` parts, each a variable or `_` (`x.y.z`), capped at 4: libcspm gives
    /// each part at least one field, so such a variable cannot stand for a dotted value of
    /// fewer fields (libcspm's "empty dot sequence"). 0: no such bound.
    const DOT_PARTS: u16 = 0b11 << 8;
    const DOT_PARTS_SHIFT: u16 = 8;

    /// Not a class: marks the type of the first field given to a variable `x` that a
    /// productions set `{| x |}` makes a value with fields left (libcspm's extendable
    /// types): every `x.y` in its scope gives `y` that one field, so the types of those `y`
    /// are one. The variable stands for a single field: bound to anything else (a dotted
    /// value, a value waiting for fields, an event), it is bound to [`Ty::Any`] instead, as
    /// weft cannot tell what libcspm makes of it.
    const FIRST_FIELD: u16 = 1 << 10;

    /// Adds `c`.
    pub(super) fn insert(&mut self, c: Class) {
        self.0 |= c.bit();
    }
    pub(super) fn union(self, o: Classes) -> Classes {
        let parts = (self.0 & Self::DOT_PARTS).max(o.0 & Self::DOT_PARTS);
        Classes(((self.0 | o.0) & !Self::DOT_PARTS) | parts)
    }
    /// The fewest fields of the dotted value a variable with these classes stands for
    /// (0: no bound; see [`Classes::DOT_PARTS`]).
    pub(super) fn dot_parts(self) -> usize {
        match (self.0 & Self::DOT_PARTS) >> Self::DOT_PARTS_SHIFT {
            0 => 0,
            n => n as usize + 1,
        }
    }
    /// These classes, for a variable standing for a dotted value of at least `n` fields.
    pub(super) fn with_dot_parts(self, n: usize) -> Classes {
        if n < 2 {
            return self;
        }
        let bits = ((n.min(4) - 1) as u16) << Self::DOT_PARTS_SHIFT;
        self.union(Classes(bits))
    }
    /// These classes, for a variable libcspm may know as a dotted value (see
    /// [`Classes::MAYBE_DOTTED`]).
    pub(super) fn with_maybe_dotted(self) -> Classes {
        Classes(self.0 | Self::MAYBE_DOTTED)
    }
    /// These classes, for the first field of a value with fields left (see
    /// [`Classes::FIRST_FIELD`]).
    pub(super) fn with_first_field(self) -> Classes {
        Classes(self.0 | Self::FIRST_FIELD)
    }
    pub(super) fn first_field(self) -> bool {
        self.0 & Self::FIRST_FIELD != 0
    }
    pub(super) fn contains(self, c: Class) -> bool {
        self.0 & c.bit() != 0
    }
    pub(super) fn maybe_dotted(self) -> bool {
        self.0 & Self::MAYBE_DOTTED != 0
    }
    pub(super) fn iter(self) -> impl Iterator<Item = Class> {
        [
            Class::Eq,
            Class::Ord,
            Class::Set,
            Class::Yieldable,
            Class::Complete,
        ]
        .into_iter()
        .filter(move |c| self.contains(*c))
    }
}
