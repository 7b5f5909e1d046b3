//! Forwarding of rank output: [`LineSplitter`] cuts one rank's stdout or stderr into
//! lines and adds the `[rank] ` label, so lines from different ranks never interleave.
//! Sans-IO: it turns input bytes into output bytes.

/// Longest line kept whole; longer ones are passed on in pieces of this size.
pub const MAX_LINE: usize = 64 * 1024;

/// Line assembly for one output stream of one rank.
#[derive(Debug)]
pub struct LineSplitter {
    label: Option<String>,
    partial: Vec<u8>,
    /// A piece of the current line was already emitted (its label too).
    mid_line: bool,
}

impl LineSplitter {
    /// `label`: `Some(rank)` to prefix every line with `[rank] `.
    pub fn new(label: Option<u32>) -> Self {
        LineSplitter {
            label: label.map(|r| format!("[{r}] ")),
            partial: Vec::new(),
            mid_line: false,
        }
    }

    /// Whether an incomplete line is being held back.
    pub fn has_partial(&self) -> bool {
        !self.partial.is_empty()
    }

    /// Adds bytes read from the rank; complete lines are appended to `out`.
    pub fn push(&mut self, mut data: &[u8], out: &mut Vec<u8>) {
        while let Some(nl) = data.iter().position(|&b| b == b'\n') {
            self.partial.extend_from_slice(&data[..=nl]);
            self.emit(out);
            self.mid_line = false;
            data = &data[nl + 1..];
        }
        self.partial.extend_from_slice(data);
        if self.partial.len() >= MAX_LINE {
            self.emit(out);
            self.mid_line = true;
        }
    }

    /// Passes on the incomplete line held back (the rank has been quiet for a while, e.g.
    /// it printed a prompt). The rest of the line follows without a new label.
    pub fn flush_partial(&mut self, out: &mut Vec<u8>) {
        if !self.partial.is_empty() {
            self.emit(out);
            self.mid_line = true;
        }
    }

    /// End of the stream: passes on what is left. A labelled line is ended with a newline;
    /// unlabelled output is passed on exactly.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let had_text = !self.partial.is_empty() || self.mid_line;
        self.emit(out);
        if self.label.is_some() && had_text {
            out.push(b'\n');
        }
        self.mid_line = false;
    }

    fn emit(&mut self, out: &mut Vec<u8>) {
        if self.partial.is_empty() {
            return;
        }
        if let (Some(l), false) = (&self.label, self.mid_line) {
            out.extend_from_slice(l.as_bytes());
        }
        out.append(&mut self.partial);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_complete_lines() {
        let mut s = LineSplitter::new(Some(3));
        let mut out = Vec::new();
        s.push(b"hello\nwor", &mut out);
        assert_eq!(out, b"[3] hello\n");
        s.push(b"ld\n\nx", &mut out);
        assert_eq!(out, b"[3] hello\n[3] world\n[3] \n");
        s.finish(&mut out);
        assert_eq!(out, b"[3] hello\n[3] world\n[3] \n[3] x\n");
    }

    #[test]
    fn unlabelled_is_exact() {
        let mut s = LineSplitter::new(None);
        let mut out = Vec::new();
        s.push(b"a\nb", &mut out);
        assert_eq!(out, b"a\n");
        s.finish(&mut out);
        assert_eq!(out, b"a\nb");
    }

    #[test]
    fn partial_flush_keeps_one_label() {
        let mut s = LineSplitter::new(Some(0));
        let mut out = Vec::new();
        s.push(b"Enter: ", &mut out);
        assert!(out.is_empty());
        assert!(s.has_partial());
        s.flush_partial(&mut out);
        s.push(b"42\nnext\n", &mut out);
        assert_eq!(out, b"[0] Enter: 42\n[0] next\n");
        s.finish(&mut out);
        assert_eq!(out, b"[0] Enter: 42\n[0] next\n");
    }

    #[test]
    fn very_long_lines_are_split() {
        let mut s = LineSplitter::new(Some(1));
        let mut out = Vec::new();
        s.push(&vec![b'x'; MAX_LINE + 10], &mut out);
        assert_eq!(out.len(), MAX_LINE + 10 + 4);
        s.push(b"\n", &mut out);
        assert_eq!(out.iter().filter(|&&b| b == b'[').count(), 1);
        assert!(out.ends_with(b"x\n"));
    }
}
