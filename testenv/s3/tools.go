//go:build tools

// Package s3 pins the S3 server testenv/s3.sh builds: Versity's S3
// gateway, a real S3 implementation (multipart uploads, ListObjectsV2,
// ranged GETs) over a posix directory.
package s3

import _ "github.com/versity/versitygw/cmd/versitygw"
