//! Tests of the reading in pieces (`chunked`) against the sequential reader: the same LTS
//! (labels, their numbering, states, transitions) or the same error (text and line), whatever
//! the piece size and the number of workers.

use std::io::Write;

use proptest::prelude::*;

use super::chunked::parse_chunked;
use super::*;

/// The sequential reader's result, as compared: the LTS with its input state numbers, or the
/// error's text and line.
fn outcome(result: Result<Lts, AutError>) -> Result<(Lts, Vec<u32>), (String, Option<u64>)> {
    match result {
        Ok(lts) => {
            let numbers = (0..lts.covered()).map(|s| lts.state_number(s)).collect();
            Ok((lts, numbers))
        }
        Err(e) => Err((e.to_string(), e.line())),
    }
}

/// Asserts that `text` reads the same in pieces of `piece` bytes on `workers` workers as
/// sequentially.
fn assert_same(text: &[u8], piece: usize, workers: usize) -> Result<(), TestCaseError> {
    let opts = AutOptions::default();
    let sequential = outcome(parse(text, &opts, None));
    let chunked = outcome(parse_chunked(text, &opts, None, workers, piece));
    match (&sequential, &chunked) {
        (Ok((a, na)), Ok((b, nb))) => {
            prop_assert_eq!(a, b, "piece {}, workers {}", piece, workers);
            prop_assert_eq!(a.label_names(), b.label_names());
            prop_assert_eq!(na, nb);
        }
        _ => prop_assert_eq!(
            &sequential,
            &chunked,
            "piece {}, workers {}",
            piece,
            workers
        ),
    }
    Ok(())
}

fn check_same(text: &[u8], piece: usize, workers: usize) {
    if let Err(e) = assert_same(text, piece, workers) {
        panic!("{e}");
    }
}

const WORKERS: [usize; 3] = [1, 2, 4];

#[test]
fn small_corpus_files_read_the_same_in_small_pieces() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/aut");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "aut") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut checked = 0;
    for path in files {
        let text = std::fs::read(&path).unwrap();
        if text.len() > 64 << 10 {
            continue;
        }
        for piece in [1, 23, 512] {
            for workers in WORKERS {
                check_same(&text, piece, workers);
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} small corpus files");
}

#[test]
fn errors_at_piece_boundaries_are_the_sequential_ones() {
    let good = "des (0, 4, 3)\n(0, \"a\", 1)\n\n(1, b, 2)\r\n(2, i, 0)\n(0,\"c, d\",2)\n";
    let bad = [
        // A malformed line in the middle and at the end (without newline).
        "des (0, 4, 3)\n(0, \"a\", 1)\n(1, b 2)\n(2, i, 0)\n(0,\"c\",2)\n",
        "des (0, 4, 3)\n(0, \"a\", 1)\n(1, b, 2)\n(2, i, 0)\n(0,\"c\",2",
        // A state out of range; one transition more; one fewer.
        "des (0, 4, 3)\n(0, \"a\", 1)\n(1, b, 3)\n(2, i, 0)\n(0,\"c\",2)\n",
        "des (0, 3, 3)\n(0, \"a\", 1)\n(1, b, 2)\n(2, i, 0)\n(0,\"c\",2)\n",
        "des (0, 5, 3)\n(0, \"a\", 1)\n(1, b, 2)\n(2, i, 0)\n(0,\"c\",2)\n",
        // A bad header; no header; an empty input; blank lines only.
        "des (0, 4 3)\n(0, \"a\", 1)\n",
        "(0, \"a\", 1)\n",
        "",
        "\n  \n\t\n",
        // An initial state out of range, the header after blank lines, no newline at all.
        "des (5, 0, 3)\n",
        "\n\ndes (0, 1, 2)\n(0,a,1)",
        "des (0, 0, 1)",
    ];
    for text in std::iter::once(good).chain(bad) {
        for piece in 1..=text.len() + 1 {
            for workers in WORKERS {
                check_same(text.as_bytes(), piece, workers);
            }
        }
    }
}

#[test]
fn a_broken_gzip_stream_fails_where_its_text_ends() {
    let mut text = String::from("des (0, 3000, 3001)\n");
    for s in 0..3000 {
        text.push_str(&format!("({s}, \"label_{}\", {})\n", s % 5, s + 1));
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() - 9] {
        let truncated = &bytes[..cut];
        let opts = AutOptions::default();
        let sequential = parse(flate2::bufread::MultiGzDecoder::new(truncated), &opts, None);
        for piece in [64, 4096] {
            for workers in WORKERS {
                let chunked = parse_chunked(
                    flate2::bufread::MultiGzDecoder::new(truncated),
                    &opts,
                    None,
                    workers,
                    piece,
                );
                assert_eq!(
                    outcome(parse(
                        flate2::bufread::MultiGzDecoder::new(truncated),
                        &opts,
                        None
                    )),
                    outcome(chunked),
                    "cut {cut}, piece {piece}, workers {workers}"
                );
            }
        }
        assert!(sequential.is_err());
    }
}

/// One line of a generated `.aut` body.
#[derive(Clone, Debug)]
enum Line {
    Transition(u32, u32, u32),
    Blank,
    Malformed(&'static str),
}

const LABELS: [&str; 6] = ["\"a\"", "b", "i", "\"tau\"", "\"c(1, 2)\"", " d e "];

const MALFORMED: [&str; 6] = [
    "(0, a 1)",
    "(0, \"a\", 1",
    "0, a, 1)",
    "(x, a, 1)",
    "(0, , 1)",
    "(0, a, 1) extra",
];

fn arb_line(states: u32) -> impl Strategy<Value = Line> {
    prop_oneof![
        8 => (0..states + 1, 0..LABELS.len() as u32, 0..states + 1)
            .prop_map(|(s, l, t)| Line::Transition(s, l, t)),
        1 => Just(Line::Blank),
        1 => proptest::sample::select(&MALFORMED[..]).prop_map(Line::Malformed),
    ]
}

/// A generated `.aut` text: a header whose counts may disagree with the body, lines with
/// `\n` or `\r\n`, states sometimes one past the declared range, malformed lines anywhere,
/// and maybe no newline at the end.
fn arb_text() -> impl Strategy<Value = Vec<u8>> {
    (1u32..6)
        .prop_flat_map(|states| {
            (
                Just(states),
                proptest::collection::vec((arb_line(states), any::<bool>()), 0..40),
                -1i64..2,
                any::<bool>(),
            )
        })
        .prop_map(|(states, lines, skew, final_newline)| {
            let transitions = lines
                .iter()
                .filter(|(l, _)| matches!(l, Line::Transition(..)))
                .count() as i64;
            let declared = (transitions + skew).max(0);
            let mut text = format!("des (0, {declared}, {states})\n").into_bytes();
            for (line, crlf) in &lines {
                match line {
                    Line::Transition(s, l, t) => {
                        text.extend_from_slice(
                            format!("({s},{},{t})", LABELS[*l as usize]).as_bytes(),
                        );
                    }
                    Line::Blank => text.extend_from_slice(b"  "),
                    Line::Malformed(m) => text.extend_from_slice(m.as_bytes()),
                }
                if *crlf {
                    text.push(b'\r');
                }
                text.push(b'\n');
            }
            if !final_newline && text.last() == Some(&b'\n') {
                text.pop();
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Generated texts, mostly malformed somewhere, read the same in pieces of any size on 1,
    /// 2 and 4 workers: the same LTS or the same error.
    #[test]
    fn generated_texts_read_the_same_in_pieces(text in arb_text(), piece in 1usize..64) {
        for workers in WORKERS {
            assert_same(&text, piece, workers)?;
        }
    }
}
