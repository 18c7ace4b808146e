package scheduler

import "errors"

var (
	// ErrConfig: the configuration is incomplete or inconsistent.
	ErrConfig = errors.New("scheduler: bad configuration")
	// ErrLeadership: this scheduler is (no longer) the active one.
	ErrLeadership = errors.New("scheduler: leadership lost")
	// ErrNotReady: the scheduler is not subscribed with its plan loaded.
	ErrNotReady = errors.New("scheduler: not subscribed yet")
	// ErrBadRequest: an API request is malformed.
	ErrBadRequest = errors.New("scheduler: bad request")
	// ErrController: the Sluice controller's API refused or failed a call.
	ErrController = errors.New("scheduler: controller API")
	// ErrAPI: the scheduler's API answered an error (Client).
	ErrAPI = errors.New("scheduler: API error")
	// ErrFrameworkRemoved: the master removed the framework (torn down,
	// or its failover timeout passed) and refuses its id for good; Run
	// ends with it. Config.ForgetFramework registers anew.
	ErrFrameworkRemoved = errors.New("scheduler: the Mesos master has removed the framework")
)
