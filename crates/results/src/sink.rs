//! The file under a [`crate::ResultStream`]: a buffered writer that moves large files past
//! the page cache.
//!
//! A large model's result file is many gigabytes (a 100,000-section ladder writes 10.6 GB of
//! CSV). Through the page cache, every byte is first copied into freshly allocated kernel
//! pages; on the 2-core development machine that copy cost 25 s of system time for such a file,
//! a quarter of the whole run, while the same bytes written with `O_DIRECT` took under 1 s
//! (`dd` with and without `oflag=direct`). The file is not read back by the run, so caching
//! it helps nobody and evicts what the user's other programs cached.
//!
//! So once a file has grown past [`DIRECT_AFTER`] bytes, on Linux, whole aligned chunks go
//! to the disk directly; the tail and every positioned write (the `.mat` sizes patched at the
//! end) go through the page cache as before. A file system that refuses direct I/O (`tmpfs`
//! on older kernels, network file systems) is written through the page cache throughout.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};

/// Alignment of direct writes: address, length and file offset. 4 KiB covers the logical
/// block size of current disks (512 B or 4 KiB).
const ALIGN: usize = 4096;

/// Buffer size: a whole number of aligned blocks, large enough that a direct write keeps the
/// disk busy.
const CHUNK: usize = 8 << 20;

/// Bytes written through the page cache before direct writes are tried: small files (every
/// test, most simulations) never use them.
pub(crate) const DIRECT_AFTER: u64 = 64 << 20;

/// One aligned block of the buffer.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Block([u8; ALIGN]);

pub(crate) struct FileSink {
    file: File,
    buf: Vec<Block>,
    /// Bytes in `buf` not yet written.
    len: usize,
    /// File offset of `buf`'s first byte.
    pos: u64,
    direct: Direct,
    direct_after: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direct {
    /// Not tried yet.
    Maybe,
    /// The file is open with `O_DIRECT`.
    On,
    /// Refused, or no longer possible (after a seek).
    Off,
}

impl FileSink {
    pub(crate) fn new(file: File) -> FileSink {
        FileSink::with_direct_after(file, DIRECT_AFTER)
    }

    /// A sink that tries direct writes once `bytes` have been written (tests use 0).
    pub(crate) fn with_direct_after(file: File, bytes: u64) -> FileSink {
        FileSink {
            file,
            buf: vec![Block([0; ALIGN]); CHUNK / ALIGN],
            len: 0,
            pos: 0,
            direct: Direct::Maybe,
            direct_after: bytes,
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `Block` is a plain array of bytes with no padding (`repr(C)`, size ALIGN),
        // so the blocks of the vector are CHUNK contiguous, initialized bytes.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), CHUNK) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`.
        unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().cast::<u8>(), CHUNK) }
    }

    /// Write the full buffer: directly when the file allows it, else through the cache.
    fn write_chunk(&mut self) -> io::Result<()> {
        debug_assert_eq!(self.len, CHUNK);
        if self.direct == Direct::Maybe
            && self.pos >= self.direct_after
            && self.pos.is_multiple_of(ALIGN as u64)
        {
            self.direct = if set_direct(&self.file, true) {
                Direct::On
            } else {
                Direct::Off
            };
        }
        let mut done = 0;
        while done < CHUNK {
            match (&self.file).write(&self.bytes()[done..]) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A direct write the file system or the device refuses (alignment it
                // requires beyond ALIGN, a short write that left the rest unaligned):
                // the rest goes through the page cache.
                Err(e) if self.direct == Direct::On && e.raw_os_error() == Some(EINVAL) => {
                    self.direct_off();
                }
                Err(e) => return Err(e),
            }
        }
        self.pos += CHUNK as u64;
        self.len = 0;
        Ok(())
    }

    /// Write whatever is buffered through the page cache (the tail of the file, or before a
    /// positioned write).
    fn write_rest(&mut self) -> io::Result<()> {
        if self.direct == Direct::On {
            self.direct_off();
        }
        let len = self.len;
        let mut done = 0;
        while done < len {
            match (&self.file).write(&self.bytes()[done..len]) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.pos += len as u64;
        self.len = 0;
        Ok(())
    }

    fn direct_off(&mut self) {
        set_direct(&self.file, false);
        self.direct = Direct::Off;
    }

    /// Whether direct writes are in use (for tests).
    #[cfg(test)]
    fn is_direct(&self) -> bool {
        self.direct == Direct::On
    }
}

impl Write for FileSink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut taken = 0;
        while taken < data.len() {
            let at = self.len;
            let n = (CHUNK - at).min(data.len() - taken);
            self.bytes_mut()[at..at + n].copy_from_slice(&data[taken..taken + n]);
            self.len += n;
            taken += n;
            if self.len == CHUNK {
                self.write_chunk()?;
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_rest()?;
        self.file.flush()
    }
}

impl Seek for FileSink {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        if to == SeekFrom::Current(0) {
            return Ok(self.pos + self.len as u64);
        }
        self.write_rest()?;
        // Positioned writes leave the file offset unaligned: no direct writes after one.
        self.direct = Direct::Off;
        self.pos = self.file.seek(to)?;
        Ok(self.pos)
    }
}

impl Drop for FileSink {
    fn drop(&mut self) {
        // Errors here are lost, as with `BufWriter`; `ResultStream::finish` flushes first.
        let _ = self.write_rest();
    }
}

#[cfg(target_os = "linux")]
const EINVAL: i32 = libc::EINVAL;
#[cfg(not(target_os = "linux"))]
const EINVAL: i32 = 22;

/// Turn `O_DIRECT` on or off for `file`; false when the system refuses.
#[cfg(target_os = "linux")]
fn set_direct(file: &File, on: bool) -> bool {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this process owns, with integer arguments only.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return false;
        }
        let flags = if on {
            flags | libc::O_DIRECT
        } else {
            flags & !libc::O_DIRECT
        };
        libc::fcntl(fd, libc::F_SETFL, flags) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn set_direct(_file: &File, _on: bool) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("moss-sink-{}-{name}", std::process::id()))
    }

    /// Bytes that differ from chunk to chunk, so a misplaced chunk shows.
    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn direct_and_cached_writes_make_the_same_file() {
        let path = temp("direct");
        let data = pattern(3 * CHUNK + 12_345);
        {
            let mut sink = FileSink::with_direct_after(File::create(&path).unwrap(), 0);
            // Pieces of odd sizes, as rows are.
            for piece in data.chunks(1_000_003) {
                sink.write_all(piece).unwrap();
            }
            sink.flush().unwrap();
        }
        let mut back = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut back).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(back.len(), data.len());
        assert!(back == data, "the file differs from what was written");
    }

    #[test]
    fn positioned_writes_after_direct_ones_land_in_place() {
        let path = temp("patch");
        let data = pattern(2 * CHUNK + 777);
        {
            let mut sink = FileSink::with_direct_after(File::create(&path).unwrap(), 0);
            sink.write_all(&data).unwrap();
            assert_eq!(sink.stream_position().unwrap(), data.len() as u64);
            sink.seek(SeekFrom::Start(10)).unwrap();
            sink.write_all(b"patch").unwrap();
            sink.seek(SeekFrom::End(0)).unwrap();
            sink.write_all(b"end").unwrap();
            sink.flush().unwrap();
        }
        let mut back = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut back).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut expected = data;
        expected[10..15].copy_from_slice(b"patch");
        expected.extend_from_slice(b"end");
        assert!(back == expected, "the patched file differs");
    }

    #[test]
    fn small_files_stay_in_the_page_cache() {
        let path = temp("small");
        let mut sink = FileSink::new(File::create(&path).unwrap());
        sink.write_all(&pattern(CHUNK + 1)).unwrap();
        assert!(!sink.is_direct());
        drop(sink);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), CHUNK as u64 + 1);
        std::fs::remove_file(&path).unwrap();
    }
}
