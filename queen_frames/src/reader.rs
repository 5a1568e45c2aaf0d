//! A bounds-checked little-endian cursor over untrusted bytes.

use crate::FrameError;

pub struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, at: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.at
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], FrameError> {
        if len > self.remaining() {
            return Err(FrameError::Truncated(what));
        }
        let piece = &self.data[self.at..self.at + len];
        self.at += len;
        Ok(piece)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let piece = &self.data[self.at..];
        self.at = self.data.len();
        piece
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], FrameError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, FrameError> {
        Ok(self.take(1, what)?[0])
    }
    pub fn u16(&mut self, what: &'static str) -> Result<u16, FrameError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    pub fn u32(&mut self, what: &'static str) -> Result<u32, FrameError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    pub fn u64(&mut self, what: &'static str) -> Result<u64, FrameError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    pub fn i64(&mut self, what: &'static str) -> Result<i64, FrameError> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }
    pub fn id16(&mut self, what: &'static str) -> Result<[u8; 16], FrameError> {
        self.array(what)
    }

    /// `u16 len | UTF-8 text`.
    pub fn text16(&mut self, what: &'static str) -> Result<&'a str, FrameError> {
        let len = self.u16(what)? as usize;
        let bytes = self.take(len, what)?;
        std::str::from_utf8(bytes).map_err(|_| FrameError::invalid(format!("{what} is not UTF-8")))
    }
}

/// Appends `u16 len | text`; errors when the text does not fit 16 bits.
pub fn put_text16(out: &mut Vec<u8>, text: &str, what: &'static str) -> Result<(), FrameError> {
    let len = u16::try_from(text.len())
        .map_err(|_| FrameError::invalid(format!("{what} longer than 65535 bytes")))?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    Ok(())
}
