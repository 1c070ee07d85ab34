//go:build !unix

package file

import "os"

// fileID is a file's identity. Without inodes, files are told apart by
// their fingerprint only.
type fileID struct{ Dev, Ino uint64 }

func idOf(os.FileInfo) fileID { return fileID{} }

// String is "": there is no identity to show.
func (fileID) String() string { return "" }
