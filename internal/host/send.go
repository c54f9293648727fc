package host

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// SendDir copies the directory src of this computer into dst on h (made
// when missing) as one tar stream through Run: modes kept, every file
// owned by whoever runs the host's commands.
func SendDir(ctx context.Context, h Host, src, dst string) error {
	pr, pw := io.Pipe()
	packed := make(chan error, 1)
	go func() {
		err := pack(pw, src)
		pw.CloseWithError(err)
		packed <- err
	}()
	_, err := h.Run(ctx, []string{"sh", "-c", `mkdir -p "$1" && exec tar -x --no-same-owner -C "$1" -f -`, "sh", dst}, pr)
	pr.CloseWithError(errors.New("the host stopped reading")) // a packer still writing stops
	if perr := <-packed; perr != nil {
		return fmt.Errorf("packing %s: %w", src, perr)
	}
	if err != nil {
		return fmt.Errorf("unpacking into %s on %s: %w", dst, h.Name(), err)
	}
	return nil
}

// pack writes the directory dir as a tar stream (paths relative to it;
// directories, regular files and symbolic links; no owners).
func pack(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		case !fi.Mode().IsRegular() && !fi.IsDir():
			return fmt.Errorf("%s: neither a file, a directory nor a link", rel)
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = filepath.ToSlash(rel), 0, 0, "", ""
		if fi.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, fi.Size())
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
