// Does tiny_http 0.12 leave a new connection unserved? Per trial: a fresh
// server (its TaskPool starts 4 threads), 3 keep-alive connections held open
// (3 threads busy, 1 idle), then 2 connections opened back to back, each
// sending one request. A request not answered within 2 s is "stuck"; then
// one extra connection opens and closes (the poke of
// scripts/chrome-attempt.sh) and the stuck request is given 2 s more.
// SINGLE=1: the control, the two connections 50 ms apart.
//
//   cargo run --release --manifest-path benches/tiny-http-race/Cargo.toml -- 100
use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

const REQ: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";

fn answered(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 256];
    matches!(s.read(&mut buf), Ok(n) if n > 0)
}

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let (mut stuck, mut unstuck_by_poke) = (0, 0);
    for _ in 0..trials {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let addr = server.server_addr().to_ip().unwrap();
        thread::spawn(move || {
            for rq in server.incoming_requests() {
                thread::spawn(move || {
                    let _ = rq.respond(tiny_http::Response::from_string("ok"));
                });
            }
        });
        thread::sleep(Duration::from_millis(20)); // the pool's 4 threads park
        let mut held: Vec<TcpStream> = (0..3)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(REQ).unwrap();
                assert!(answered(&mut s, Duration::from_secs(5)));
                s
            })
            .collect();
        thread::sleep(Duration::from_millis(20));
        let single = std::env::var_os("SINGLE").is_some();
        let mut a = TcpStream::connect(addr).unwrap();
        if single {
            thread::sleep(Duration::from_millis(50));
        }
        let mut b = TcpStream::connect(addr).unwrap();
        a.write_all(REQ).unwrap();
        b.write_all(REQ).unwrap();
        let ok_a = answered(&mut a, Duration::from_secs(2));
        let ok_b = answered(&mut b, Duration::from_secs(2));
        if !(ok_a && ok_b) {
            stuck += 1;
            let start = Instant::now();
            {
                let mut p = TcpStream::connect(addr).unwrap();
                p.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
                let mut v = Vec::new();
                let _ = p.read_to_end(&mut v);
            }
            let late = if ok_a { &mut b } else { &mut a };
            if answered(late, Duration::from_secs(2)) {
                unstuck_by_poke += 1;
                eprintln!(
                    "stuck request answered {:?} after the poke",
                    start.elapsed()
                );
            }
        }
        held.clear();
    }
    println!("{trials} trials: {stuck} with a request unanswered after 2 s; {unstuck_by_poke} of those answered right after one extra connection opened and closed");
}
