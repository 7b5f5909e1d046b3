//! The reserved spawn info keys whose meaning does not depend on where the processes
//! run, shared by the MPI library (which checks them at the spawning root) and `mpiexec`
//! (which applies them):
//!
//! - `soft` (MPI 4.1 §11.8.4): the numbers of processes a command may start, as a
//!   comma-separated list of Fortran-90 triplets `a`, `a:b`, `a:b:c` ([`Soft`]). Values
//!   below 1 and above `maxprocs` are ignored (a command starts at least one process),
//!   and the spawn starts the largest allowed number that fits ([`Soft::choose`]).
//! - `file`: the name of a file of further info pairs for the same command, one
//!   `key=value` a line ([`read_info_file`], [`with_file`]). Its format is oxmpi's: the
//!   standard leaves it to the implementation.

/// Longest `soft` value read, in bytes.
const MAX_SOFT_LEN: usize = 4096;
/// Largest info file read, in bytes.
const MAX_FILE_LEN: u64 = 1 << 20;
/// Longest key of an info file (`MPI_MAX_INFO_KEY`, its NUL excluded).
const MAX_KEY: usize = 255;
/// Longest value of an info file (`MPI_MAX_INFO_VAL`, its NUL excluded).
const MAX_VALUE: usize = 1024;

/// A parsed `soft` value: the union of its triplets `(first, last, step)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Soft {
    triplets: Vec<(i64, i64, i64)>,
}

impl Soft {
    /// Parses a `soft` value; the error says what is wrong with it.
    pub fn parse(value: &str) -> Result<Soft, String> {
        if value.len() > MAX_SOFT_LEN {
            return Err(format!(
                "{} bytes long (at most {MAX_SOFT_LEN})",
                value.len()
            ));
        }
        let mut triplets = Vec::new();
        for part in value.split(',') {
            let part = part.trim();
            let num = |s: &str| -> Result<i64, String> {
                s.trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|n| n.unsigned_abs() <= 1 << 31)
                    .ok_or_else(|| format!("{s:?} in {part:?} is not an integer"))
            };
            let f: Vec<&str> = part.split(':').collect();
            let t = match f.as_slice() {
                [""] => return Err("an empty entry (a stray comma?)".into()),
                [a] => (num(a)?, num(a)?, 1),
                [a, b] => (num(a)?, num(b)?, 1),
                [a, b, c] => (num(a)?, num(b)?, num(c)?),
                _ => return Err(format!("{part:?} has more than three fields")),
            };
            let (a, b, c) = t;
            if c == 0 {
                return Err(format!("{part:?} has a step of 0"));
            }
            if (b > a && c < 0) || (b < a && c > 0 && f.len() == 3) {
                return Err(format!(
                    "{part:?}: the step must go from {a} towards {b} (MPI 4.1 §11.8.4)"
                ));
            }
            if b < a && f.len() == 2 {
                return Err(format!("{part:?}: a range a:b needs a <= b"));
            }
            triplets.push(t);
        }
        Ok(Soft { triplets })
    }

    /// True when `n` is in the set.
    pub fn allows(&self, n: i64) -> bool {
        self.triplets.iter().any(|&(a, b, c)| {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            n >= lo && n <= hi && (n - a) % c == 0
        })
    }

    /// The number of processes to start: the largest allowed number from 1 to `maxprocs`
    /// and, when given, to `limit`; None when none is allowed.
    pub fn choose(&self, maxprocs: u32, limit: Option<u32>) -> Option<u32> {
        let top = limit.map_or(maxprocs, |l| l.min(maxprocs));
        (1..=top).rev().find(|&n| self.allows(i64::from(n)))
    }
}

/// The info pairs of the file `path` (the `file` key), or why it cannot be used: one
/// `key=value` a line, blanks around key and value dropped; empty lines and lines
/// starting with `#` are skipped. A file may not name another file.
pub fn read_info_file(path: &str) -> Result<Vec<(String, String)>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open {path:?}: {e}"))?;
    let mut text = String::new();
    f.take(MAX_FILE_LEN + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {path:?}: {e}"))?;
    if text.len() as u64 > MAX_FILE_LEN {
        return Err(format!("{path:?} is longer than {MAX_FILE_LEN} bytes"));
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{path:?} line {}", i + 1);
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| format!("{}: {line:?} is not key=value", at()))?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || k.len() > MAX_KEY || k.chars().any(char::is_whitespace) {
            return Err(format!(
                "{}: key {k:?} (1 to {MAX_KEY} characters without blanks)",
                at()
            ));
        }
        if v.is_empty() || v.len() > MAX_VALUE {
            return Err(format!(
                "{}: the value of {k:?} must have 1 to {MAX_VALUE} characters",
                at()
            ));
        }
        if k == "file" {
            return Err(format!("{}: a file cannot name another file", at()));
        }
        out.push((k.to_owned(), v.to_owned()));
    }
    Ok(out)
}

/// `info` with its `file` key replaced by the pairs of that file; a key given in `info`
/// itself wins over the file's. Unchanged when there is no `file` key.
pub fn with_file(info: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    let Some((_, path)) = info.iter().find(|(k, _)| k == "file") else {
        return Ok(info.to_vec());
    };
    let mut out: Vec<(String, String)> =
        info.iter().filter(|(k, _)| k != "file").cloned().collect();
    for (k, v) in read_info_file(path)? {
        if !out.iter().any(|(o, _)| *o == k) {
            out.push((k, v));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str, upto: i64) -> Vec<i64> {
        let soft = Soft::parse(s).unwrap();
        (0..=upto).filter(|&n| soft.allows(n)).collect()
    }

    #[test]
    fn triplets_as_the_standard_defines_them() {
        assert_eq!(set("4", 10), [4]);
        assert_eq!(set("2:5", 10), [2, 3, 4, 5]);
        assert_eq!(set("2:10:2,7", 12), [2, 4, 6, 7, 8, 10]);
        assert_eq!(set("9:1:-4", 12), [1, 5, 9]);
        assert_eq!(set("1:8:3", 12), [1, 4, 7]);
        assert_eq!(set(" 1 , 3 : 4 ", 12), [1, 3, 4]);
        assert_eq!(set("0:2", 3), [0, 1, 2]);
    }

    #[test]
    fn choices() {
        let s = Soft::parse("1:8").unwrap();
        assert_eq!(s.choose(8, Some(3)), Some(3));
        assert_eq!(s.choose(8, None), Some(8));
        assert_eq!(s.choose(8, Some(0)), None);
        let s = Soft::parse("2,4,6").unwrap();
        assert_eq!(s.choose(8, Some(3)), Some(2));
        assert_eq!(s.choose(8, None), Some(6));
        assert_eq!(s.choose(8, Some(1)), None);
        // Only 0 and values above maxprocs: nothing to start.
        assert_eq!(Soft::parse("0,9:12").unwrap().choose(8, None), None);
        assert_eq!(Soft::parse("-3:-1").unwrap().choose(8, None), None);
    }

    #[test]
    fn malformed_values() {
        for (v, why) in [
            ("", "empty entry"),
            ("1,,2", "empty entry"),
            ("a", "not an integer"),
            ("1:2:3:4", "three fields"),
            ("1:5:0", "step of 0"),
            ("1:5:-1", "towards"),
            ("5:1:1", "towards"),
            ("5:1", "a <= b"),
            ("99999999999", "not an integer"),
        ] {
            let e = Soft::parse(v).unwrap_err();
            assert!(e.contains(why), "{v:?}: {e}");
        }
    }

    #[test]
    fn info_files() {
        let dir = std::env::temp_dir().join(format!("oxmpi-spawn-info-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good");
        std::fs::write(&good, "# spawn keys\n soft = 1:2 \n\nwdir=/tmp\n").unwrap();
        let g = good.to_str().unwrap();
        assert_eq!(
            read_info_file(g).unwrap(),
            [
                ("soft".to_string(), "1:2".to_string()),
                ("wdir".to_string(), "/tmp".to_string())
            ]
        );
        let info = vec![
            ("file".to_string(), g.to_string()),
            ("wdir".to_string(), "/".to_string()),
        ];
        assert_eq!(
            with_file(&info).unwrap(),
            [
                ("wdir".to_string(), "/".to_string()),
                ("soft".to_string(), "1:2".to_string())
            ]
        );
        for (text, why) in [
            ("soft 1:2\n", "line 1"),
            ("wdir=/tmp\n=3\n", "line 2"),
            ("soft=\n", "1 to 1024"),
            ("file=/etc/passwd\n", "another file"),
        ] {
            let bad = dir.join("bad");
            std::fs::write(&bad, text).unwrap();
            let e = read_info_file(bad.to_str().unwrap()).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
        assert!(read_info_file(dir.join("none").to_str().unwrap())
            .unwrap_err()
            .contains("cannot open"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
