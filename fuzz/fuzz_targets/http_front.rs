//! The parsing the HTTP library leaves to the inspector: the checks of a
//! request's head (the token from `Authorization: Bearer` or `?token=`,
//! percent-decoded; the `Host` name and port; the `Origin`), on header
//! values as a client could send them. A panic is a crash; so is a request
//! let through that should not be: one without its token, one that names
//! no host on a loopback server, one from another origin.
//!
//! The input: a byte of flags, then the host, origin, authorization,
//! query and token, separated by 0xFF bytes.
//!
//! Seeds: `fuzz/seeds/http_front/`.

#![no_main]

use libfuzzer_sys::fuzz_target;

const PORT: u16 = 15713;

fn percent_encoded(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("%{b:02X}")).collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let mut fields = rest.split(|&b| b == 0xFF);
    let mut next = || fields.next();
    let (host, origin, authorization) = (next(), next(), next());
    let query = next().map(String::from_utf8_lossy).unwrap_or_default();
    let token = next().map(String::from_utf8_lossy).filter(|t| !t.is_empty());
    let loopback = flags & 1 != 0;
    let token = token.filter(|_| flags & 2 != 0);
    let port = if flags & 4 != 0 { PORT } else { u16::from(flags) };

    // Decoding: never panics; every byte string survives encoding.
    let _ = archetable_inspect::form_decode_for_fuzzing(&query);
    assert_eq!(archetable_inspect::form_decode_for_fuzzing(&percent_encoded(rest)).as_deref(), Some(rest));

    let Some(admitted) =
        archetable_inspect::admit_for_fuzzing(host, origin, authorization, &query, token.as_deref(), loopback, port)
    else {
        return;
    };
    if admitted.is_err() {
        return;
    }
    if let Some(token) = &token {
        let in_header = authorization.is_some_and(|a| a.windows(token.len()).any(|w| w == token.as_bytes()));
        assert!(in_header || (authorization.is_none() && query.contains("token=")), "let through without its token");
    }
    if loopback {
        let host = host.expect("let through with no Host on a loopback server");
        let host = String::from_utf8_lossy(host).to_ascii_lowercase();
        assert!(
            ["127.0.0.1", "localhost", "[::1]"].iter().any(|name| host.starts_with(name)),
            "let through with Host {host:?} on a loopback server"
        );
    }
    if let Some(origin) = origin {
        let origin = String::from_utf8_lossy(origin).to_ascii_lowercase();
        let host = String::from_utf8_lossy(host.expect("an origin needs a host")).to_ascii_lowercase();
        assert_eq!(origin, format!("http://{host}"), "let through from another origin");
    }
});
