// Package s3gateway serves tier 2 read-only over the S3 API, so that
// boto3, the AWS CLI, DuckDB (s3://) and Spark (s3a://) read streams'
// chunks. It is an http.Handler over a tier2/view.View (NewHandler); the
// S3 role (`sluice s3-gateway`, embedded in `sluice standalone`) mounts it
// on its HTTP server.
//
// # Buckets and keys
//
// Every scope is a bucket of the same name, and every chunk a key:
//
//	s3://<scope>/<stream>/segment=<N>/<first offset, 20 digits>.seq
//
// A bucket per scope keeps the view's tree as it is (the scope is S3's
// namespace, the stream the first key element) and lets a client be given
// one scope. Scope names are [A-Za-z0-9_.-]{1,255}; those that are also
// DNS-compatible bucket names (3-63 lower-case letters, digits, '.' and
// '-', starting and ending with a letter or digit) work with every client
// and both addressing styles; any other scope is reachable path-style by
// clients that do not check bucket names (boto3 and the AWS CLI accept
// [A-Za-z0-9_.-]), not virtual-hosted (a Host is case-insensitive).
//
// Addressing: path style, "/<bucket>/<key>", for any Host; virtual-hosted
// style, Host "<bucket>.<Config.Domain>" or "<bucket>.localhost" (any
// port) and path "/<key>". An unsigned request that reaches the head on
// a loopback address must name a loopback Host (see Authentication).
//
// # Operations
//
//	GET  /                          ListBuckets: every scope
//	HEAD /<bucket>                  HeadBucket (x-amz-bucket-region)
//	GET  /<bucket>?location         GetBucketLocation (empty for us-east-1,
//	                                as S3 answers)
//	GET  /<bucket>?versioning       GetBucketVersioning: never enabled
//	GET  /<bucket>?list-type=2      ListObjectsV2: prefix, delimiter (any
//	                                string), continuation-token, start-after,
//	                                max-keys (default and cap MaxKeys),
//	                                fetch-owner, encoding-type=url
//	GET  /<bucket>                  ListObjects (V1): marker, NextMarker
//	HEAD /<bucket>/<key>            HeadObject
//	GET  /<bucket>/<key>            GetObject: one Range (206; 416 past the
//	                                end; several ranges or a bad header: the
//	                                whole object), If-Match, If-None-Match,
//	                                If-Modified-Since, If-Unmodified-Since
//	                                (412, 304), If-Range, response-* header
//	                                overrides (signed requests only, as S3),
//	                                partNumber=1, versionId=null
//
// Keys come in S3's order (byte-wise) whatever the tree's order: the
// listing walks the tree with each directory's children sorted by name
// plus '/', skipping subtrees outside the prefix, before the marker, or
// folded into one common prefix. A bucket's streams are named by the
// catalog (view.Names) and not described, so a page asks tier 2 only
// about the streams it walks into: a prefix naming one stream costs a few
// tier-2 calls however many streams the bucket has. A continuation token is the last key (or
// common prefix) of the page with a check bound to the bucket, prefix and
// delimiter; a token that fails it is InvalidArgument. Nothing is cached:
// a deleted stream is gone from the next listing (after the view's
// catalog TTL), a chunk renamed into place is in it, and a chunk still
// being written (its "_tmp." name) is never listed or served.
//
// Objects are application/octet-stream with Accept-Ranges: bytes and
// Last-Modified the chunk's time; every answer carries
// X-Content-Type-Options: nosniff, so that no browser takes a chunk for
// HTML. The ETag is not an MD5 (computing one
// would read every chunk a listing names): it is "<32 hex>-1", the form of
// a multipart upload's ETag, which clients know not to check a body
// against (see ETag). GetObject streams from the chunk through a 256 KiB
// buffer; nothing is held in memory but that. Each write of the body has
// Config.StallTimeout to complete: a client that stops reading is
// disconnected then, and frees its buffer and chunk.
//
// # Authentication
//
// Requests are signed with AWS Signature Version 4 (package sigv4: the
// Authorization header or a presigned URL) by a key of
// Config.Credentials, for Config.Region. Unsigned requests are served
// only when Config.Anonymous is set; a signed request is always verified.
// An unsigned request may not set response-* overrides (InvalidRequest,
// as S3), and, whatever address it came in on, is served only when its
// Host is a name no web page can own (AllowedHost): an IP literal or a
// name ending in a number (127.1), a localhost name, Config.Domain or a
// name under it, or one of Config.AllowedHosts ("*": any Host, the guard
// off). A web page that re-points its own name at an address of the head
// (DNS rebinding: 127.0.0.1, where a container's port may be published,
// or a LAN address) sends that name, and is refused with AccessDenied
// naming the Host. Signed requests, which no page can make, may use any
// Host.
//
// # Refused
//
// Every PUT, POST, DELETE and PATCH (objects, copies, multipart uploads,
// DeleteObjects, ACLs, policies, tags, ...) is AccessDenied (403, with
// ReadOnlyMessage) before anything else is checked. Other read
// subresources (?acl, ?tagging, ?uploads, ?versions, ...) are
// NotImplemented (501); other methods MethodNotAllowed (405).
//
// # Errors
//
// S3's XML, <Error><Code/><Message/><Resource/><RequestId/></Error> (a
// HEAD gets the status alone); every answer has x-amz-request-id.
//
//	400 AuthorizationHeaderMalformed  a bad Authorization header or presign
//	                            query, or a region other than Config.Region
//	                            (<Region> names the expected one)
//	400 InvalidRequest          signature version 2, a read with a body, or
//	                            response-* overrides on an unsigned request
//	400 InvalidArgument         a bad list parameter or continuation token
//	400 KeyTooLongError, InvalidURI  a key over MaxKeyLen, a query over
//	                            MaxQueryLen
//	400 XAmzContentSHA256Mismatch  a signed read's body against its hash
//	403 AccessDenied            writes; unsigned requests without
//	                            Config.Anonymous, or on a loopback address
//	                            with another Host; an expired presigned URL
//	403 InvalidAccessKeyId      a key not in Config.Credentials
//	403 SignatureDoesNotMatch   the signature is wrong
//	403 RequestTimeTooSkewed    more than 15 minutes off the head's clock
//	404 NoSuchBucket, NoSuchKey
//	405 MethodNotAllowed        a method other than GET, HEAD and the writes
//	412 PreconditionFailed      If-Match or If-Unmodified-Since
//	416 InvalidRange            a range starting past the end
//	501 NotImplemented          a read subresource not served
//	503 ServiceUnavailable      tier 2 or the controller unavailable
//	                            (view.ErrUnavailable), with Retry-After: 1
package s3gateway
