// Package s3keys owns the one format of the S3 heads' access keys, so that
// every program that is given keys refuses the same ones: the S3 head
// (sluice s3-gateway, the standalone's --s3-credentials) parses them before
// it serves, and the Mesos scheduler checks SLUICE_S3_CREDENTIALS with the
// same Parse before it launches a head that would refuse them at start.
//
// The format is text of ACCESS:SECRET pairs, separated by commas or
// newlines, so that a flag's value and a file's contents read alike:
//
//	AKIDONE:secret-one,AKIDTWO:secret-two
//	# comment lines and blank lines are ignored
//	AKIDTHREE : secret:with:colons
//
// Spaces and tabs around a pair and around either part are dropped. The
// secret is everything after the first colon (it may hold '/', '+', '='
// and further colons). The access key may not be empty nor hold '/',
// a space or a tab (it is a word of the SigV4 Credential scope), nor
// start with '#' (on a line of its own it would be a comment); the
// secret may not be empty; an access key given twice is an error, even
// with the same secret.
//
// Errors wrap ErrInvalid and name the line, the pair and the fault, never
// any of the text, not even the access key: the likeliest mistakes put
// secret material where the access key belongs (a pair written
// SECRET:ACCESS, and AWS secrets often hold '/'; "AKID SECRET:..."), and
// the errors reach logs (the scheduler's start-up error, a task's log).
package s3keys
