//! The TCP connections between the processes of a run, made by weft rather than by timely.
//!
//! Timely's own set-up polls for connections once a second, so that every connection costs
//! up to a second (and a distributed `weft check` connects once per refinement it shares).
//! Here each process listens on its address, connects to every process before it (retrying
//! every few milliseconds until the deadline) and accepts every process after it; each
//! connection starts with the connecting process's index, which the accepting process
//! answers with its own (so that a port another program listens on is an error, not a wait
//! without end). The connections then go to
//! timely's own networking (`initialize_networking_from_sockets`), as timely's set-up would
//! hand them.

#![forbid(unsafe_code)]

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// How long a process waits between two attempts to connect or to accept.
const RETRY: Duration = Duration::from_millis(5);

/// The connections of process `me` among the processes at `addresses`, by process index
/// (`None` at `me`); an error if some process has not connected by `deadline`.
pub(super) fn connect_all(
    addresses: &[String],
    me: usize,
    deadline: Instant,
) -> io::Result<Vec<Option<TcpStream>>> {
    let listener = TcpListener::bind(addresses[me].as_str())?;
    listener.set_nonblocking(true)?;
    let mut sockets: Vec<Option<TcpStream>> = (0..addresses.len()).map(|_| None).collect();
    // Connect to the processes before this one: each listens from its start, and accepts
    // its later processes in any order.
    for (index, address) in addresses.iter().enumerate().take(me) {
        let mut stream = loop {
            match TcpStream::connect(address.as_str()) {
                Ok(stream) => break stream,
                Err(e) if Instant::now() >= deadline => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot connect to process {index} at {address}: {e}"),
                    ))
                }
                Err(_) => std::thread::sleep(RETRY),
            }
        };
        stream.set_nodelay(true)?;
        stream.write_all(&(me as u64).to_be_bytes())?;
        // The process there answers with its own index: a listener of another program at
        // that address (a port taken by another service) never does, and must not leave this
        // process waiting for timely's handshake forever.
        stream.set_read_timeout(Some(
            deadline
                .saturating_duration_since(Instant::now())
                .max(RETRY),
        ))?;
        let mut answer = [0u8; 8];
        let answered = stream.read_exact(&mut answer);
        if answered.is_err() || u64::from_be_bytes(answer) != index as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "what listens at {address} did not answer as process {index} of this run{}",
                    answered.err().map_or(String::new(), |e| format!(" ({e})"))
                ),
            ));
        }
        stream.set_read_timeout(None)?;
        sockets[index] = Some(stream);
    }
    // Accept the processes after this one.
    let mut awaited = addresses.len() - me - 1;
    while awaited > 0 {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false)?;
                stream.set_nodelay(true)?;
                stream.set_read_timeout(Some(
                    deadline
                        .saturating_duration_since(Instant::now())
                        .max(RETRY),
                ))?;
                let mut index = [0u8; 8];
                stream.read_exact(&mut index)?;
                stream.set_read_timeout(None)?;
                let index = u64::from_be_bytes(index) as usize;
                if index <= me || index >= addresses.len() || sockets[index].is_some() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("a connection from an unexpected process ({index})"),
                    ));
                }
                stream.write_all(&(me as u64).to_be_bytes())?;
                sockets[index] = Some(stream);
                awaited -= 1;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("{awaited} later process(es) did not connect"),
                    ));
                }
                std::thread::sleep(RETRY);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(sockets)
}
