package journal

import (
	"encoding/binary"
	"os"
)

// The durable mark: a writer that has fsynced a channel's active segment
// says so, so that a reader in another process need not fsync the same
// bytes again before it passes them (see "Durability and crashes" in the
// package doc).
//
// The mark is 32 bytes at the start of the channel's lock file
// (messages.lock, which holds nothing else: the lock is an flock): the
// segment's identity (device and inode), the offset up to which it is
// known to be on stable storage, and a check over the three, so that a
// read torn by a concurrent write, an older build's empty lock file or
// garbage reads as "nothing known". A reader trusts it only for the file
// it has open (same device and inode) and only for bytes it read before
// it read the mark.
//
// Why a stale mark cannot vouch for bytes that are not durable:
//   - a writer publishes (ino, end) only after an fsync that started
//     after its write ending at end had finished, and only while it still
//     has that file open, so no other file can have that inode then;
//   - whoever creates a new active segment (under the channel's lock,
//     before any line is written to it) writes the mark (ino, 0) first,
//     so a mark left by an earlier file that had the same inode number
//     (freed since, and reused) is overwritten before the new file holds
//     a byte;
//   - a reader reads the data first and the mark after, so a mark it
//     reads is at least as new as the reset that preceded that data;
//   - a reader opens the lock file at its path for each look, so a lock
//     file replaced meanwhile (whose marks predate the reset written to
//     the new one) is never consulted.
//
// A mark that goes backwards (two processes publishing out of order) or
// is lost (a crash, a replaced lock file) only makes readers fsync
// themselves, as they did before marks existed.
const markSize = 32

// markMagic is mixed into the check so that zeros do not verify.
const markMagic = 0x6d637072745f646d // "mcprt_dm"

func markCheck(dev, ino, end uint64) uint64 {
	h := uint64(markMagic)
	for _, v := range [3]uint64{dev, ino, end} {
		h ^= v
		h *= 0x100000001b3 // FNV-1a's prime: any odd mixer works
		h ^= h >> 29
	}
	return h
}

// encodeMark writes the mark for the file id durable up to end into b.
func encodeMark(b *[markSize]byte, id [2]uint64, end int64) {
	binary.LittleEndian.PutUint64(b[0:], id[0])
	binary.LittleEndian.PutUint64(b[8:], id[1])
	binary.LittleEndian.PutUint64(b[16:], uint64(end))
	binary.LittleEndian.PutUint64(b[24:], markCheck(id[0], id[1], uint64(end)))
}

// decodeMark reads a mark; ok is false for anything that does not verify.
func decodeMark(b []byte) (id [2]uint64, end int64, ok bool) {
	if len(b) < markSize {
		return id, 0, false
	}
	dev, ino := binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])
	e := binary.LittleEndian.Uint64(b[16:])
	if binary.LittleEndian.Uint64(b[24:]) != markCheck(dev, ino, e) || e > 1<<62 || (dev == 0 && ino == 0) {
		return id, 0, false
	}
	return [2]uint64{dev, ino}, int64(e), true
}

// writeMark writes the mark into the lock file f (best effort: a mark
// that cannot be written only costs readers an fsync).
func writeMark(f *os.File, id [2]uint64, end int64) {
	if id == ([2]uint64{}) {
		return // no identity on this system: never vouch
	}
	var b [markSize]byte
	encodeMark(&b, id, end)
	_, _ = f.WriteAt(b[:], 0)
}

// readMark returns the end up to which the file id is known durable
// according to the lock file f, or 0.
func readMark(f *os.File, id [2]uint64) int64 {
	var b [markSize]byte
	n, _ := f.ReadAt(b[:], 0)
	got, end, ok := decodeMark(b[:n])
	if !ok || got != id {
		return 0
	}
	return end
}
