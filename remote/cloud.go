package remote

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"google.golang.org/api/option"
)

// GCSOptions configure gs:// (Google Cloud Storage), from the keys of
// Fluss's gs file system (fs.gs.*, also spelt gs.*).
type GCSOptions struct {
	// Endpoint is the storage root URL (fs.gs.storage.root.url), e.g.
	// "http://127.0.0.1:4443/" for an emulator. Empty: Google's.
	Endpoint string
	// CredentialsFile is a service account JSON key file
	// (fs.gs.auth.service.account.json.keyfile). Empty: application
	// default credentials.
	CredentialsFile string
	// Unauthenticated sends no credentials (fs.gs.auth.type:
	// UNAUTHENTICATED), for public buckets and emulators.
	Unauthenticated bool
}

// AzureOptions configure abfs://, abfss://, wasb:// and wasbs://, from the
// keys of Fluss's Azure file system (fs.azure.*, also spelt azure.*).
type AzureOptions struct {
	// AccountKey is the storage account's shared key
	// (fs.azure.account.key, or fs.azure.account.key.<account host>).
	// Empty: Azure's default credential chain (environment, workload
	// identity, managed identity).
	AccountKey string
	// Endpoint overrides the blob service URL derived from the path's
	// host, e.g. "http://127.0.0.1:10000/devstoreaccount1" for Azurite.
	Endpoint string
}

// azureSchemes are Fluss's Azure file system schemes and whether each
// uses TLS.
var azureSchemes = map[string]bool{"abfs": false, "abfss": true, "wasb": false, "wasbs": true}

func isAzure(scheme string) bool {
	_, ok := azureSchemes[scheme]
	return ok
}

// isS3Compatible reports the schemes served through the S3 API: AWS S3
// (s3, s3a), and Alibaba OSS, Tencent COS (cosn) and Huawei OBS through
// their S3-compatible endpoints.
func isS3Compatible(scheme string) bool {
	switch scheme {
	case "s3", "s3a", "oss", "cosn", "obs":
		return true
	}
	return false
}

// openObjectStore opens the bucket of an object-store remote.data.dir.
func openObjectStore(ctx context.Context, scheme string, dir FsPath, remoteDataDir string, opts Options) (*blob.Bucket, error) {
	switch {
	case scheme == "gs":
		return openGCS(ctx, dir.Authority, opts.GCS)
	case isAzure(scheme):
		return openAzure(ctx, scheme, dir.Authority, opts.Azure)
	case isS3Compatible(scheme):
		if scheme != "s3" && scheme != "s3a" && opts.S3Endpoint == "" {
			return nil, fmt.Errorf("remote: remote.data.dir %q: %s:// needs an S3-compatible endpoint (S3Endpoint)", remoteDataDir, scheme)
		}
		return openS3(ctx, dir.Authority, opts)
	}
	return nil, fmt.Errorf("remote: remote.data.dir %q: unsupported scheme %q", remoteDataDir, scheme)
}

func openGCS(ctx context.Context, bucketName string, o GCSOptions) (*blob.Bucket, error) {
	var copts []option.ClientOption
	if o.Endpoint != "" {
		// Reads through the JSON API too: emulators serve the XML API's
		// object URLs only under Google's own host name.
		copts = append(copts, option.WithEndpoint(strings.TrimSuffix(o.Endpoint, "/")+"/storage/v1/"), storage.WithJSONReads())
	}
	switch {
	case o.Unauthenticated:
		copts = append(copts, option.WithoutAuthentication())
	case o.CredentialsFile != "":
		copts = append(copts, option.WithAuthCredentialsFile(option.ServiceAccount, o.CredentialsFile))
	}
	client, err := storage.NewClient(ctx, copts...)
	if err != nil {
		return nil, fmt.Errorf("remote: Google Cloud Storage client: %w", err)
	}
	b, err := gcsblob.OpenBucket(ctx, nil, bucketName, &gcsblob.Options{Client: client})
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("remote: open bucket %q: %w", bucketName, err)
	}
	return b, nil
}

// azureAuthority splits a Hadoop Azure authority,
// container@account.dfs.core.windows.net (abfs) or
// container@account.blob.core.windows.net (wasb), into the container, the
// account name and the blob service URL.
func azureAuthority(scheme, authority string) (containerName, account, serviceURL string, err error) {
	containerName, host, ok := strings.Cut(authority, "@")
	if !ok || containerName == "" || host == "" {
		return "", "", "", fmt.Errorf("remote: %s authority %q: want container@account.dfs.core.windows.net", scheme, authority)
	}
	account, suffix, _ := strings.Cut(host, ".")
	if account == "" {
		return "", "", "", fmt.Errorf("remote: %s authority %q: no account name", scheme, authority)
	}
	// The blob service of account.dfs.X or account.blob.X is account.blob.X.
	if rest, ok := strings.CutPrefix(suffix, "dfs."); ok {
		suffix = "blob." + rest
	}
	if suffix == "" {
		suffix = "blob.core.windows.net"
	}
	proto := "http"
	if azureSchemes[scheme] {
		proto = "https"
	}
	return containerName, account, proto + "://" + account + "." + suffix + "/", nil
}

func openAzure(ctx context.Context, scheme, authority string, o AzureOptions) (*blob.Bucket, error) {
	containerName, account, serviceURL, err := azureAuthority(scheme, authority)
	if err != nil {
		return nil, err
	}
	if o.Endpoint != "" {
		serviceURL = strings.TrimSuffix(o.Endpoint, "/") + "/"
	}
	containerURL, err := url.JoinPath(serviceURL, containerName)
	if err != nil {
		return nil, fmt.Errorf("remote: Azure container URL: %w", err)
	}
	var client *container.Client
	var copts *container.ClientOptions
	if o.AccountKey != "" {
		cred, err := container.NewSharedKeyCredential(account, o.AccountKey)
		if err != nil {
			return nil, fmt.Errorf("remote: Azure account key: %w", err)
		}
		client, err = container.NewClientWithSharedKeyCredential(containerURL, cred, copts)
		if err != nil {
			return nil, fmt.Errorf("remote: Azure client: %w", err)
		}
	} else {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("remote: Azure credentials (no fs.azure.account.key given): %w", err)
		}
		client, err = container.NewClient(containerURL, cred, copts)
		if err != nil {
			return nil, fmt.Errorf("remote: Azure client: %w", err)
		}
	}
	b, err := azureblob.OpenBucket(ctx, client, nil)
	if err != nil {
		return nil, fmt.Errorf("remote: open container %q: %w", containerName, err)
	}
	return b, nil
}
