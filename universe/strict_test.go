package universe_test

import (
	"reflect"
	"testing"
)

// TestStrictModeOptions: service.service_account and
// service.service_account_secret make the app declare the secret,
// hand it to the scheduler as DCOS_SERVICE_ACCOUNT_CREDENTIAL (a secret
// reference: Marathon puts the content there) and make the service
// account the principal; without them the app has neither and keeps
// service.principal.
func TestStrictModeOptions(t *testing.T) {
	app := render(t, readFile(t, "testdata/options-strict.json"))
	if got := app.Secrets["serviceCredential"].Source; got != "sluice/service-account" || len(app.Secrets) != 1 {
		t.Fatalf("secrets = %v, want serviceCredential from sluice/service-account", app.Secrets)
	}
	if got, want := app.Env["DCOS_SERVICE_ACCOUNT_CREDENTIAL"], map[string]any{"secret": "serviceCredential"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("env DCOS_SERVICE_ACCOUNT_CREDENTIAL = %v, want %v", got, want)
	}
	if got := app.Env["SLUICE_PRINCIPAL"]; got != "sluice-sa" {
		t.Fatalf("SLUICE_PRINCIPAL = %v, want the service account", got)
	}

	// The secret alone: the principal is left to the credential's uid.
	app = render(t, []byte(`{"service": {"service_account_secret": "sluice/service-account"}}`))
	if got := app.Env["SLUICE_PRINCIPAL"]; got != "" {
		t.Fatalf("SLUICE_PRINCIPAL with only the secret = %v, want empty (the scheduler takes the uid)", got)
	}

	app = render(t, nil)
	if len(app.Secrets) != 0 {
		t.Fatalf("default app declares secrets %v", app.Secrets)
	}
	if _, ok := app.Env["DCOS_SERVICE_ACCOUNT_CREDENTIAL"]; ok {
		t.Fatal("default app sets DCOS_SERVICE_ACCOUNT_CREDENTIAL")
	}
	if got := app.Env["SLUICE_PRINCIPAL"]; got != "sluice-principal" {
		t.Fatalf("default SLUICE_PRINCIPAL = %v, want sluice-principal", got)
	}
}
