// Package sigv4 verifies AWS Signature Version 4 on requests to the S3
// head (s3gateway): the Authorization header form and the presigned-URL
// (query) form, for the S3 service, as AWS documents them. It never signs;
// the head's tests sign with real clients (boto3, the AWS CLI, DuckDB).
//
// # What is checked, in order
//
// Authorization header:
//
//	Authorization: AWS4-HMAC-SHA256 Credential=<key>/<yyyymmdd>/<region>/s3/aws4_request,
//	               SignedHeaders=<h1;h2;...>, Signature=<64 hex>
//	X-Amz-Date: <yyyymmdd>T<hhmmss>Z        (or Date: an HTTP date)
//	X-Amz-Content-Sha256: <64 hex> | UNSIGNED-PAYLOAD | STREAMING-...
//
// Presigned URL (query parameters):
//
//	X-Amz-Algorithm=AWS4-HMAC-SHA256  X-Amz-Credential=<as above>
//	X-Amz-Date=<yyyymmdd>T<hhmmss>Z   X-Amz-Expires=<1..604800 seconds>
//	X-Amz-SignedHeaders=<h1;h2;...>   X-Amz-Signature=<64 hex>
//
// The credential's date must be the request date's day, its service "s3"
// and its terminator "aws4_request"; the region must be the verifier's
// (ErrWrongRegion otherwise, naming the region expected). A header-signed
// request more than MaxSkew from the verifier's clock is ErrSkewed; a
// presigned one is valid from its date (less MaxSkew) until date+expires
// (ErrExpired after). SignedHeaders must name host. Lengths are bounded
// before anything is decoded: the Authorization header and each auth
// parameter to MaxAuthLen bytes, at most MaxSignedHeaders headers.
//
// # The canonical request
//
//	<METHOD>\n
//	<path: each segment of the decoded path percent-encoded once, '/' kept>\n
//	<query: each name and value decoded then percent-encoded, sorted by name
//	 then value, "name=value" joined by '&'; X-Amz-Signature left out>\n
//	<each signed header "name:value\n", values trimmed, inner spaces folded,
//	 repeated headers joined by ','>\n
//	<signed headers, ';'-joined>\n
//	<payload hash: X-Amz-Content-Sha256; UNSIGNED-PAYLOAD when presigned>
//
// Percent-encoding keeps A-Z a-z 0-9 - . _ ~ and writes every other byte
// as %XX (upper-case hex). S3 does not encode the path twice (other AWS
// services do). The string to sign is
//
//	AWS4-HMAC-SHA256\n<X-Amz-Date>\n<date>/<region>/s3/aws4_request\n<hex SHA-256 of the canonical request>
//
// signed with the key HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region),
// "s3"), "aws4_request"); the signatures are compared in constant time.
//
// A hashed payload is not checked here: the head serves reads only, and
// checks a read's (empty) body against the hash itself.
package sigv4
