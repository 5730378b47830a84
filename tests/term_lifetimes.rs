//! Misuse of the term library is a compile error (DESIGN.md, "The term library"): each file of
//! `tests/compile_fail/` must fail to compile with the error in its `.stderr` file.
//!
//! - a `TermRef` cannot outlive the `Term` handle or the shared section it borrows from;
//! - a `Term` cannot outlive its `TermThread`;
//! - neither a `Term` nor a `TermThread` can be sent to another thread, and a `TermRef` can go
//!   only to threads that end while its protection lasts.
//!
//! After a compiler upgrade changes the wording, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test --release --test term_lifetimes` and review the diff.

#[test]
fn misuse_of_terms_does_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/*.rs");
}

/// The allowed counterpart of `term_ref_to_spawned_thread`: scoped threads may read a
/// `TermRef` while the `Term` protecting it lives.
#[test]
fn term_refs_may_go_to_scoped_threads() {
    let table = weft::term::TermTable::new();
    let thread = table.register_thread();
    let term = thread.constant(weft::term::Symbol::new("a", 0));
    let r = term.as_ref();
    let shown = std::thread::scope(|s| s.spawn(move || r.to_string()).join());
    assert_eq!(shown.ok().as_deref(), Some("a"));
}
