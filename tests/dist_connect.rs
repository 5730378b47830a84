//! The connect handshake of a distributed run: a process that connects to a port where some
//! other program listens (not a weft process of the run) ends with a clear error and exit 2
//! within its connect deadline, whether that program says nothing or says something else.

#[path = "common/dist.rs"]
mod dist;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dist::{root, scratch, WEFT};
use serde_json::Value;

/// What the other program does with a connection, once it has read what the connecting
/// process sent first.
#[derive(Clone, Copy)]
enum Listener {
    /// Answers nothing, and keeps the connection open.
    Silent,
    /// Answers 8 bytes that are not process 0's index.
    WrongIndex,
    /// Answers as a web server would.
    Text,
}

/// Starts `listener` on a free port of localhost: its address, and a channel of the first
/// 8 bytes each connection sent.
fn other_program(listener: Listener) -> (String, mpsc::Receiver<[u8; 8]>) {
    let socket = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("127.0.0.1:{}", socket.local_addr().unwrap().port());
    let (sent, received) = mpsc::channel();
    std::thread::spawn(move || {
        // The connections stay open as long as the test process lives.
        let mut open: Vec<TcpStream> = Vec::new();
        for stream in socket.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut first = [0u8; 8];
            if stream.read_exact(&mut first).is_ok() {
                let _ = sent.send(first);
            }
            match listener {
                Listener::Silent => {}
                Listener::WrongIndex => {
                    let _ = stream.write_all(&7u64.to_be_bytes());
                }
                Listener::Text => {
                    let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
                }
            }
            open.push(stream);
        }
    });
    (address, received)
}

/// A free port of localhost, for process 1 to listen on.
fn free_address() -> String {
    let socket = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("127.0.0.1:{}", socket.local_addr().unwrap().port())
}

/// Runs process 1 of a two-process `weft explore` whose process 0's address is where `listener`
/// listens, with a connect deadline of `timeout_s` seconds: its exit code, standard error, the
/// time it took, and what the other program received.
fn connect_to(listener: Listener, timeout_s: u64) -> (i32, String, Duration, Vec<[u8; 8]>) {
    let (address, received) = other_program(listener);
    let hosts = scratch("connect").join(format!("hosts-{address}").replace(':', "-"));
    std::fs::write(&hosts, format!("{address}\n{}\n", free_address())).unwrap();
    let model = root().join("examples/bounded_buffer.csp");
    let timeout = format!("{timeout_s}s");
    let started = Instant::now();
    let mut process = Command::new(WEFT)
        .args(["explore", model.to_str().unwrap()])
        .args(["--processes", "2", "--process-index", "1"])
        .arg("--hostfile")
        .arg(&hosts)
        .args(["--connect-timeout", &timeout])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A process that waits without end is a failure, not a test that never ends.
    let status = loop {
        if let Some(status) = process.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = process.kill();
            panic!("the process still waits a minute after its connect deadline of {timeout}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    let mut stderr = String::new();
    process
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (
        status.code().unwrap_or(-1),
        stderr,
        took,
        received.try_iter().collect(),
    )
}

/// The error names the address and says it is not a process of the run.
fn assert_clear_error(stderr: &str, what: &str) {
    assert!(
        stderr.contains("did not answer as process 0 of this run"),
        "{what}: {stderr}"
    );
    assert!(stderr.contains("connected within 3 s"), "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

#[test]
fn a_silent_listener_at_a_process_address_ends_the_run_at_the_deadline() {
    let (code, stderr, took, received) = connect_to(Listener::Silent, 3);
    assert_eq!(code, 2, "{stderr}");
    assert_clear_error(&stderr, "silent");
    // The process connected, sent its index, and waited for the answer until the deadline
    // (not without end).
    assert_eq!(received, vec![1u64.to_be_bytes()]);
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn a_listener_answering_something_else_ends_the_run_at_once() {
    for (listener, what) in [
        (Listener::WrongIndex, "a wrong index"),
        (Listener::Text, "text"),
    ] {
        let (code, stderr, took, received) = connect_to(listener, 3);
        assert_eq!(code, 2, "{what}: {stderr}");
        assert_clear_error(&stderr, what);
        assert_eq!(received, vec![1u64.to_be_bytes()], "{what}");
        // Well before the deadline would have passed on an idle machine; a loaded one may
        // take seconds to start weft.
        assert!(took < Duration::from_secs(30), "{what}: {took:?}");
    }
}

/// Process 0's JSON of `weft check MODEL --json` in 2 processes started with timely's short
/// options `-n 2 -p I -h FILE -w 1`.
fn check_with_short_options(model: &str) -> Value {
    let hosts = dist::hostfile(2);
    let hosts = hosts.to_str().unwrap();
    let children: Vec<_> = (0..2)
        .map(|i| {
            let index = i.to_string();
            Command::new(WEFT)
                .args([
                    "check", model, "--json", "-n", "2", "-p", &index, "-h", hosts,
                ])
                .args(["-w", "1"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut outputs: Vec<String> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(1), "a deadlock check fails");
            String::from_utf8(out.stdout).unwrap()
        })
        .collect();
    assert_eq!(outputs[1], "", "process 1 printed on stdout");
    serde_json::from_str(outputs.swap_remove(0).trim()).unwrap()
}

#[test]
fn timely_short_options_name_the_processes_and_the_host_file() {
    let model = root().join("examples/dining_philosophers.csp");
    let model = model.to_str().unwrap();
    let short = check_with_short_options(model);
    let (long, code) = dist::weft_distributed_command("check", &[model], 2, 1, &[]);
    assert_eq!(code, 1);
    let verdicts = |v: &Value| -> Vec<(Value, Value, Value)> {
        v["assertions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["verdict"].clone(),
                    a["pairs"].clone(),
                    a["counterexample"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(verdicts(&short), verdicts(&long));
    assert!(short["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["shared"] == Value::Bool(true)));
    // `-h` is the host file; help keeps its long form.
    for command in ["explore", "check", "refines"] {
        let out = Command::new(WEFT)
            .args([command, "--help"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{command} --help");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("-h, --hostfile <FILE>"), "{command}: {text}");
        assert!(
            text.contains("-p, --process-index <I>"),
            "{command}: {text}"
        );
    }
    let (code, stderr) = dist::weft(&["explore", "-h"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--hostfile"), "{stderr}");
}
