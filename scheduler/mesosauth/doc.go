// Package mesosauth authenticates the Sluice scheduler to a Mesos
// master's v1 scheduler HTTP API. It owns the credential (read once at
// start, never logged, never stored) and the Authorization header every
// call carries. Two forms are known:
//
//   - Mesos HTTP Basic authentication (a master started with
//     --authenticate_http_frameworks and the basic HTTP authenticator,
//     the principal and secret in its --credentials):
//
//     Authorization: Basic base64(PRINCIPAL ":" SECRET)
//
//   - DC/OS strict mode: a service account's credential, the JSON DC/OS
//     keeps in its secret store (dcos security secrets create-sa-secret):
//
//     {"scheme": "RS256", "uid": "UID", "private_key": "-----BEGIN PRIVATE KEY-----...",
//     "login_endpoint": "https://leader.mesos/acs/api/v1/auth/login"}
//
//     The scheduler signs a service login token, an RS256 JWT with the
//     claims {"uid": UID, "exp": now+2min} (header {"alg":"RS256","typ":"JWT"}),
//     POSTs {"uid": UID, "token": LOGIN-TOKEN} as JSON to login_endpoint
//     and gets {"token": T}, a DC/OS authentication token (a JWT whose
//     "exp" says when it expires). Every call then carries
//
//     Authorization: token=T
//
//     A new T is fetched by logging in again before T expires
//     (RefreshBefore ahead) and as soon as the master answers 401 to it
//     (the call is then sent once more with the new token).
//
// Where the credential comes from (Load): a file (`sluice scheduler
// --secret-file PATH`) holding either the plain secret (Basic, with
// --principal) or the credential JSON; else the environment:
// DCOS_SERVICE_ACCOUNT_CREDENTIAL (the JSON itself, as a Marathon secret
// puts it, or the path of a file holding it, as dcos-commons reads it),
// then SLUICE_MESOS_SECRET (a plain Basic secret). Never the command
// line. With a service account the Mesos principal is its uid: a
// different --principal is refused.
//
// A 401 or 403 from the master becomes one error, ErrRefused, naming
// the principal and the scheme, the status and the master's own words;
// a refused login, ErrLogin. Neither ever holds the secret, the key or a
// token. The scheduler's driver backs off between subscriptions, so a
// wrong secret is retried slowly, not in a loop.
package mesosauth
