//! Tests of the `.aut` reader and writer.

use std::io::Write;

use super::parser::find_newline;
use super::*;

fn read(text: &str) -> Result<Lts, AutError> {
    read_aut(text.as_bytes(), &AutOptions::default())
}

fn triples(lts: &Lts) -> Vec<(u32, String, u32)> {
    lts.transitions()
        .map(|(s, l, t)| (s, lts.label_names()[l as usize].clone(), t))
        .collect()
}

#[test]
fn reads_quoted_bare_and_internal_labels() {
    let lts = read(
        "des (0, 5, 3)\n(0, \"send(1, 2)\", 1)\n(1,i,2)\n  ( 2 ,  b c , 0 )  \r\n\n(0,\"tau\",2)\n(2,\"i\",1)",
    )
    .unwrap();
    assert_eq!(lts.initial(), 0);
    assert_eq!(lts.num_states(), 3);
    assert_eq!(lts.label_names(), &["tau", "send(1, 2)", "b c"]);
    assert_eq!(
        triples(&lts),
        vec![
            (0, "send(1, 2)".to_string(), 1),
            (0, "tau".to_string(), 2),
            (1, "tau".to_string(), 2),
            (2, "b c".to_string(), 0),
            (2, "tau".to_string(), 1),
        ]
    );
}

#[test]
fn tau_option_overrides_internal_names() {
    let opts = AutOptions {
        tau_labels: vec!["internal".to_string()],
    };
    let lts = read_aut(&b"des(0,2,2)\n(0,i,1)\n(1,\"internal\",0)\n"[..], &opts).unwrap();
    assert_eq!(lts.label_names(), &["tau", "i"]);
    assert_eq!(triples(&lts)[1], (1, "tau".to_string(), 0));
}

#[test]
fn labels_with_quotes_commas_and_parentheses() {
    let lts = read("des (0,3,2)\n(0,\"a\"b\",1)\n(1,f(x, y),0)\n(1,\"),(\",1)\n").unwrap();
    assert_eq!(lts.label_names(), &["tau", "a\"b", "f(x, y)", "),("]);
}

fn error_of(text: &str) -> AutError {
    match read(text) {
        Ok(_) => panic!("{text:?} should not read"),
        Err(e) => e,
    }
}

#[test]
fn malformed_lines_name_their_line_and_column() {
    let cases: &[(&str, u64, u64, &str)] = &[
        ("", 1, 1, "the header"),
        ("\n\n", 2, 1, "the header"),
        ("dex (0,1,1)\n", 1, 1, "the header"),
        ("des 0,1,1)\n", 1, 5, "'('"),
        ("des (0,1)\n", 1, 9, "','"),
        ("des (0,1,2) x\n", 1, 13, "the end of the header line"),
        ("des (0,1,2)\n(0,a,1\n", 2, 7, "')'"),
        ("des (0,1,2)\n\n0,a,1)\n", 3, 1, "'('"),
        ("des (0,1,2)\n(x,a,1)\n", 2, 2, "the source state"),
        ("des (0,1,2)\n(0,,1)\n", 2, 4, "a label"),
        ("des (0,1,2)\n(0,\"a,1)\n", 2, 9, "'\"' closing"),
        ("des (0,1,2)\n(0,\"a\" 1)\n", 2, 8, "','"),
        ("des (0,1,2)\n(0,a,-1)\n", 2, 6, "the target state"),
        ("des (0,1,2)\n(0,a,1) x\n", 2, 9, "the end of the line"),
        ("des (0,1,2)\n(0,a,99999999999)\n", 2, 6, "below 2^32"),
        ("des (0,1,2)\n(0\n", 2, 3, "','"),
    ];
    for &(text, line, column, expected) in cases {
        match error_of(text) {
            AutError::Syntax {
                line: l,
                column: c,
                expected: e,
                ..
            } => {
                assert_eq!((l, c), (line, column), "{text:?}: {e}");
                assert!(e.contains(expected), "{text:?}: {e}");
            }
            other => panic!("{text:?}: unexpected {other}"),
        }
    }
}

#[test]
fn header_disagreements_are_errors() {
    let cases: &[(&str, u64, u64, &str)] = &[
        ("des (2,0,2)\n", 1, 6, "initial state 2"),
        ("des (0,0,0)\n", 1, 6, "initial state 0"),
        ("des (0,1,2)\n(0,a,2)\n", 2, 6, "state 2 is out of range"),
        ("des (0,1,2)\n( 5 ,a,1)\n", 2, 3, "state 5"),
        (
            "des (0,1,2)\n(0,a,1)\n (1,a,0)\n",
            3,
            2,
            "one transition more",
        ),
        ("des (0, 3 ,2)\n(0,a,1)\n(1,a,0)\n", 1, 9, "ends after 2"),
        (
            "des (0,1,4000000000)\n(0,\"a\",4000000000)\n",
            2,
            8,
            "state 4000000000",
        ),
    ];
    for &(text, line, column, message) in cases {
        match error_of(text) {
            AutError::HeaderMismatch {
                line: l,
                column: c,
                message: m,
                excerpt,
                ..
            } => {
                assert_eq!((l, c), (line, column), "{text:?}: {m}");
                assert!(m.contains(message), "{text:?}: {m}");
                assert!(excerpt.is_some(), "{text:?}");
            }
            other => panic!("{text:?}: unexpected {other}"),
        }
    }
}

#[test]
fn sparse_state_numbers_are_renumbered_densely() {
    let lts =
        read("des (7,3,4000000001)\n(7,\"a\",4000000000)\n(4000000000,b,9)\n(9,i,7)\n").unwrap();
    assert_eq!(lts.num_states(), 4_000_000_001);
    assert_eq!(lts.num_transitions(), 3);
    assert_eq!(lts.covered(), 3);
    assert_eq!(lts.state_number(lts.initial()), 7);
    let numbered: Vec<(u32, u32)> = lts
        .transitions()
        .map(|(s, _, t)| (lts.state_number(s), lts.state_number(t)))
        .collect();
    assert_eq!(
        numbered,
        vec![(7, 4_000_000_000), (9, 7), (4_000_000_000, 9)]
    );
    let summary = lts.summary();
    assert_eq!(summary.initial, 7);
    assert_eq!(summary.reachable_states, 3);
    assert_eq!(summary.deadlock_states, 4_000_000_001 - 3);
    // Unsorted sources and a state used only as the initial one.
    let lts = read("des (3000000000,2,4000000001)\n(4000000000,a,5)\n(5,b,4000000000)\n").unwrap();
    assert_eq!(lts.state_number(lts.initial()), 3_000_000_000);
    assert_eq!(lts.out_degree(lts.initial()), 0);
    assert_eq!(lts.summary().reachable_states, 1);
}

#[test]
fn display_names_the_position() {
    let e = error_of("des (0,1,2)\n(0,a,-1)\n");
    assert_eq!(
        e.to_string(),
        "line 2, column 6: expected the target state, found '-1)'"
    );
    let e = e.with_path(Path::new("x.aut"));
    assert!(e.to_string().starts_with("x.aut:2:6: expected"), "{e}");
    assert!(error_of("").to_string().contains("found an empty file"));
    let garbage = read_aut(&b"\x00\xff\xfe\x01binary\n"[..], &AutOptions::default());
    match garbage {
        Err(AutError::Syntax {
            line: 1,
            column: 1,
            excerpt: Some(x),
            ..
        }) => {
            assert_eq!(x.range, 0..1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unsorted_sources_are_grouped_in_file_order() {
    let lts = read("des (1,4,3)\n(2,a,0)\n(0,b,1)\n(2,c,1)\n(0,a,2)\n").unwrap();
    assert_eq!(lts.label_names(), &["tau", "a", "b", "c"]);
    assert_eq!(
        lts.transitions().collect::<Vec<_>>(),
        vec![(0, 2, 1), (0, 1, 2), (2, 1, 0), (2, 3, 1)]
    );
}

#[test]
fn long_lines_cross_buffer_boundaries() {
    let long = "x".repeat(3 * CHUNK);
    let mut text = String::from("des (0,3,2)\n");
    for _ in 0..3 {
        text.push_str(&format!("(0,\"{long}\",1)\n"));
    }
    let lts = read(&text).unwrap();
    assert_eq!(lts.num_transitions(), 3);
    assert_eq!(lts.label_names()[1].len(), long.len());
}

#[test]
fn gzip_is_detected_by_magic_bytes() {
    let text = "des (0,1,2)\n(0,\"a\",1)\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    let lts = read_aut(&bytes[..], &AutOptions::default()).unwrap();
    assert_eq!(lts, read(text).unwrap());
    // A stream that breaks off is an error positioned where the text read so far ends
    // (fuzz case 228: it was an unpositioned I/O error).
    let truncated = read_aut(&bytes[..bytes.len() - 4], &AutOptions::default());
    assert!(
        matches!(
            truncated,
            Err(AutError::Syntax {
                line: 3,
                column: 1,
                ..
            })
        ),
        "{truncated:?}"
    );
    for cut in 11..bytes.len() - 8 {
        match read_aut(&bytes[..cut], &AutOptions::default()) {
            Err(e) => assert!(e.line().is_some_and(|l| (1..=3).contains(&l)), "{e}"),
            Ok(_) => panic!("cut at {cut}: read without an error"),
        }
    }
}

#[test]
fn huge_declared_state_count_costs_no_memory() {
    let lts = read("des (0,1,4000000001)\n(0,\"a\",4000000000)\n").unwrap();
    assert_eq!(lts.num_states(), 4_000_000_001);
    assert!(lts.covered() <= 2);
    assert_eq!(lts.summary().reachable_states, 2);
    let lts = read("des (0,1,4000000000)\n(0,a,1)\n").unwrap();
    assert_eq!(lts.num_states(), 4_000_000_000);
    assert!(lts.covered() <= 2);
    assert!(lts.is_deadlock(3_999_999_999));
    assert_eq!(lts.num_reachable(), 2);
}

#[test]
fn carriage_returns_inside_quotes_survive_a_round_trip() {
    let lts = read("des (0,1,1)\n(0,\"\rtau\r\",0)\r\n").unwrap();
    assert_eq!(lts.label_names(), &["tau", "\rtau\r"]);
    let mut out = Vec::new();
    write_aut(&lts, &mut out).unwrap();
    assert_eq!(read_aut(&out[..], &AutOptions::default()).unwrap(), lts);
    let names = vec!["tau".to_string(), "a\nb".to_string()];
    let bad = Lts::from_transitions(0, 1, names, &[(0, 1, 0)]);
    let err = write_aut(&bad, Vec::new()).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn write_then_read_gives_the_same_lts() {
    let text = "des (1,4,3)\n(0,\"send(1, 2)\",1)\n(1,tau,2)\n(2,\"a\"\"b\",0)\n(2,x,2)\n";
    let lts = read(text).unwrap();
    let mut out = Vec::new();
    write_aut(&lts, &mut out).unwrap();
    assert!(out.starts_with(b"des (1,4,3)\n(0,\"send(1, 2)\",1)\n(1,\"tau\",2)\n"));
    assert_eq!(read_aut(&out[..], &AutOptions::default()).unwrap(), lts);
}

#[test]
fn newline_search_finds_every_position() {
    for len in 0..40 {
        for at in 0..len {
            let mut bytes = vec![b'x'; len];
            bytes[at] = b'\n';
            if at + 1 < len {
                bytes[len - 1] = b'\n';
            }
            assert_eq!(find_newline(&bytes), Some(at));
        }
        assert_eq!(find_newline(&vec![0x8a; len]), None);
    }
}
