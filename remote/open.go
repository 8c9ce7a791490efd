package remote

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/blob/s3blob"

	"github.com/fluss-sidecar/fluss-sidecar/remote/hdfsblob"
)

// Options say how to reach the storage of each scheme: endpoints and
// credentials, from the fs.* keys of Fluss's file systems.
type Options struct {
	// S3Endpoint is the endpoint URL of an S3-compatible server, e.g.
	// "http://127.0.0.1:9000" (https:// is assumed without a scheme).
	// Required for oss://, cosn:// and obs://. Empty for AWS S3.
	S3Endpoint string
	// S3Region defaults to us-east-1.
	S3Region string
	// S3AccessKey and S3SecretKey are static credentials. When both are
	// empty the AWS SDK's default credential chain is used.
	S3AccessKey string
	S3SecretKey string
	// S3PathStyle addresses buckets as endpoint/bucket rather than
	// bucket.endpoint, as most S3-compatible servers need.
	S3PathStyle bool

	// GCS configures gs://; Azure configures abfs://, abfss://, wasb:// and
	// wasbs:// (see cloud.go).
	GCS   GCSOptions
	Azure AzureOptions
	// HDFS configures hdfs:// (see hdfs.go).
	HDFS HDFSOptions
}

// Location is one remote.data.dir, checked and qualified, and where its
// paths live in the bucket that serves it.
type Location struct {
	// Dir is the qualified remote.data.dir: a local directory always has
	// the file scheme, as a Java coordinator's listing qualifies it.
	Dir FsPath
	// Scheme is Dir's scheme in lower case.
	Scheme string
	// RootPath is the FsPath path of the bucket's root: the directory
	// itself for file:// and hdfs://, "" where the bucket's root is the
	// bucket named by the authority (object stores, mem://).
	RootPath string
	// LocalDir is the directory on the local file system for file://,
	// else "".
	LocalDir string
	// Driver names the gocloud.dev driver that serves the scheme, for logs
	// and metrics.
	Driver string

	given string // remote.data.dir as configured, for messages
}

// Resolve checks remoteDataDir, Fluss's remote.data.dir, without opening
// anything. It may be:
//   - a local directory, "file:///abs/dir", "file:/abs/dir" or a bare
//     "/abs/dir";
//   - "s3://bucket/prefix" (also s3a://), and "oss://", "cosn://" and
//     "obs://" through an S3-compatible endpoint;
//   - "gs://bucket/prefix";
//   - "abfs[s]://container@account.dfs.core.windows.net/prefix" and
//     "wasb[s]://container@account.blob.core.windows.net/prefix";
//   - "hdfs://namenode:port/path", "hdfs://host/path" (port 8020) or
//     "hdfs://nameservice/path";
//   - "mem://", an in-memory bucket for tests; its paths look like
//     "mem:/producers/p/1/u.offsets".
func Resolve(remoteDataDir string) (Location, error) {
	dir, err := ParseFsPath(remoteDataDir)
	if err != nil {
		return Location{}, fmt.Errorf("remote: remote.data.dir: %w", err)
	}
	loc := Location{Scheme: strings.ToLower(dir.Scheme), Driver: driverName(dir.Scheme), given: remoteDataDir}
	switch loc.Scheme {
	case "", "file":
		if dir.Authority != "" {
			return Location{}, fmt.Errorf("remote: remote.data.dir %q: a local path must not have an authority (%q); use file:///path", remoteDataDir, dir.Authority)
		}
		if !dir.IsAbs() || hasDotDot(dir.Path) {
			return Location{}, fmt.Errorf("remote: remote.data.dir %q: a local path must be absolute", remoteDataDir)
		}
		dir.Scheme, loc.Scheme = "file", "file"
		loc.RootPath = dir.Path
		loc.LocalDir = filepath.Clean(filepath.FromSlash(dir.Path))
	case "s3", "s3a", "oss", "cosn", "obs", "gs", "abfs", "abfss", "wasb", "wasbs":
		if dir.Authority == "" {
			return Location{}, fmt.Errorf("remote: remote.data.dir %q: no bucket name", remoteDataDir)
		}
	case "hdfs":
		loc.RootPath = dir.Path
	case "mem":
	default:
		return Location{}, fmt.Errorf("remote: remote.data.dir %q: unsupported scheme %q (want file, s3, s3a, oss, cosn, obs, gs, abfs, abfss, wasb, wasbs, hdfs or mem)", remoteDataDir, dir.Scheme)
	}
	// A local path with '..' is refused above, as not absolute.
	if hasDotDot(dir.Path) {
		return Location{}, fmt.Errorf("remote: remote.data.dir %q: '..' is not allowed", remoteDataDir)
	}
	loc.Dir = dir
	return loc, nil
}

// Key returns the bucket key of p, a path under the location's root,
// without a leading "/".
func (l Location) Key(p FsPath) string {
	rel := strings.TrimPrefix(p.Path, strings.TrimSuffix(l.RootPath, "/"))
	return strings.TrimPrefix(rel, "/")
}

// Open opens the bucket that serves loc. A local directory is created if
// missing, and its files hold exactly what is written (no attribute files
// beside them). dirs is the HDFS file system beneath the bucket, which has
// real directories to remove; it is nil for every other scheme.
func Open(ctx context.Context, loc Location, opts Options) (bucket *blob.Bucket, dirs *hdfsblob.FS, err error) {
	switch loc.Scheme {
	case "file":
		b, err := fileblob.OpenBucket(loc.LocalDir, &fileblob.Options{
			CreateDir: true,
			// Temporary files next to the target: a rename across file
			// systems would fail.
			NoTempDir: true,
			Metadata:  fileblob.MetadataDontWrite,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("remote: open local directory %s: %w", loc.LocalDir, err)
		}
		return b, nil, nil
	case "hdfs":
		return openHDFS(loc.Dir, loc.given, opts.HDFS)
	case "mem":
		return memblob.OpenBucket(nil), nil, nil
	}
	b, err := openObjectStore(ctx, loc.Scheme, loc.Dir, loc.given, opts)
	return b, nil, err
}

func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// driverName names the gocloud.dev driver that serves a remote.data.dir
// scheme.
func driverName(scheme string) string {
	switch scheme = strings.ToLower(scheme); {
	case scheme == "" || scheme == "file":
		return "fileblob"
	case scheme == "gs":
		return "gcsblob"
	case isAzure(scheme):
		return "azureblob"
	case isS3Compatible(scheme):
		return "s3blob"
	case scheme == "mem":
		return "memblob"
	case scheme == "hdfs":
		return "hdfsblob"
	}
	return scheme
}

func openS3(ctx context.Context, bucketName string, opts Options) (*blob.Bucket, error) {
	region := opts.S3Region
	if region == "" {
		region = "us-east-1"
	}
	var cfg aws.Config
	if opts.S3AccessKey != "" || opts.S3SecretKey != "" {
		cfg = aws.Config{
			Region:      region,
			Credentials: credentials.NewStaticCredentialsProvider(opts.S3AccessKey, opts.S3SecretKey, ""),
		}
	} else {
		var err error
		cfg, err = config.LoadDefaultConfig(ctx, config.WithRegion(region))
		if err != nil {
			return nil, fmt.Errorf("remote: load AWS configuration: %w", err)
		}
	}
	endpoint := opts.S3Endpoint
	if endpoint != "" && !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = opts.S3PathStyle
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			// Many S3-compatible servers do not support the SDK's default
			// request checksums.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
	bopts := &s3blob.Options{}
	if endpoint != "" {
		bopts.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	}
	b, err := s3blob.OpenBucket(ctx, client, bucketName, bopts)
	if err != nil {
		return nil, fmt.Errorf("remote: open bucket %q: %w", bucketName, err)
	}
	return b, nil
}
