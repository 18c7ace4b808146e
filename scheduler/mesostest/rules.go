package mesostest

import (
	"errors"
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// The checks in this file are the real master's and agent's validation
// rules that the rest of the fake does not get from its resource
// arithmetic. Each names the Mesos source it follows.

var (
	// errRole: a RESERVE of resources for a role the framework is not
	// subscribed with.
	errRole = errors.New("mesostest: role not the framework's")
	// errVolume: a CREATE the master's validation refuses.
	errVolume = errors.New("mesostest: invalid persistent volume")
	// errID: an id Mesos' common validation refuses.
	errID = errors.New("mesostest: invalid id")
	// errUUID: bytes that are not a UUID.
	errUUID = errors.New("mesostest: not a valid UUID")
)

// nameMax is NAME_MAX on Linux, the longest id Mesos accepts.
const nameMax = 255

// validateID is Mesos' rule for task, executor, framework and agent ids
// and persistence ids (src/common/validation.cpp, validateID): not
// empty, at most NAME_MAX bytes, not "." or "..", and no control
// character, '/' or '\' (ids become directory names). Spaces and dots
// elsewhere are allowed.
func validateID(what, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: %s must not be empty", errID, what)
	case len(id) > nameMax:
		return fmt.Errorf("%w: %s must not be greater than %d characters", errID, what, nameMax)
	case id == "." || id == "..":
		return fmt.Errorf("%w: %s '%s' is disallowed", errID, what, id)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c == 0x7f || c == '/' || c == '\\' {
			return fmt.Errorf("%w: %s %q contains invalid characters", errID, what, id)
		}
	}
	return nil
}

// validateUUID is stout's id::UUID::fromBytes, which the master applies
// to an ACKNOWLEDGE's uuid (src/master/validation.cpp) and the agent to
// an executor UPDATE's status uuid (src/common/validation.cpp): exactly
// 16 bytes whose version nibble (high half of byte 6) is a known UUID
// version, 1 to 5.
func validateUUID(b []byte) error {
	if len(b) != 16 {
		return fmt.Errorf("%w: %d bytes, want 16", errUUID, len(b))
	}
	if v := b[6] >> 4; v < 1 || v > 5 {
		return fmt.Errorf("%w: version %d", errUUID, v)
	}
	return nil
}

// hasRole reports whether role is one of fw's roles.
func (m *Master) hasRole(fw *framework, role string) bool {
	for _, r := range m.roles(fw) {
		if r == role {
			return true
		}
	}
	return false
}

// checkReserveRoles refuses a RESERVE over the scheduler API of a
// resource whose reservation role is not one of the framework's roles
// (src/master/validation.cpp, operation::validate(Reserve): "the
// framework can only reserve resources with roles ...").
func (m *Master) checkReserveRoles(fw *framework, res mesos.Resources) error {
	for _, r := range res {
		if role := reservationRole(r); !m.hasRole(fw, role) {
			return fmt.Errorf("%w: a RESERVE for role %q by framework %s, whose roles are %q", errRole, role, fw.id, m.roles(fw))
		}
	}
	return nil
}

// checkVolumes is the master's validation of a CREATE's volumes before
// any arithmetic (src/master/validation.cpp, validateDiskInfo and
// validateUniquePersistenceID): a volume is made of reserved disk (never
// unreserved), has disk.volume, and a persistence id that passes
// validateID and is not used twice in the operation for one role. That
// the id is not in use on the agent, and that the volume's disk (with
// its ROOT, PATH or MOUNT source) is the reserved disk offered, are
// checked by applyLocked.
func checkVolumes(vols mesos.Resources) error {
	seen := map[string]bool{}
	for _, v := range vols {
		p := v.GetDisk().GetPersistence()
		if p == nil {
			return fmt.Errorf("%w: %v has no disk.persistence", errVolume, v)
		}
		role := reservationRole(v)
		if role == "" || role == "*" {
			return fmt.Errorf("%w: persistent volume %q cannot be created from unreserved resources", errVolume, p.ID)
		}
		if v.GetDisk().GetVolume() == nil {
			return fmt.Errorf("%w: expecting 'volume' to be set for persistent volume %q", errVolume, p.ID)
		}
		if err := validateID("persistence id", p.ID); err != nil {
			return fmt.Errorf("%w: invalid persistence ID for persistent volume: %w", errVolume, err)
		}
		if seen[role+"/"+p.ID] {
			return fmt.Errorf("%w: persistence ID %q is not unique", errVolume, p.ID)
		}
		seen[role+"/"+p.ID] = true
	}
	return nil
}

// validateFrameworkInfo is the master's check of a SUBSCRIBE's
// FrameworkInfo (src/master/validation.cpp, framework::validate): role
// and not roles without MULTI_ROLE, roles and not role with it, no role
// twice, and a framework id given back that passes validateID.
func validateFrameworkInfo(info *mesos.FrameworkInfo) error {
	multi := false
	for _, c := range info.Capabilities {
		if c.Type == mesos.FrameworkInfo_Capability_MULTI_ROLE {
			multi = true
		}
	}
	switch {
	case multi && info.Role != nil:
		return errors.New("'FrameworkInfo.role' must not be set when the framework is MULTI_ROLE capable")
	case !multi && len(info.Roles) > 0:
		return errors.New("'FrameworkInfo.roles' must not be set when the framework is not MULTI_ROLE capable")
	}
	seen := map[string]bool{}
	for _, r := range info.Roles {
		if seen[r] {
			return fmt.Errorf("'FrameworkInfo.roles' contains duplicate items: %s", r)
		}
		seen[r] = true
	}
	if id := info.GetID().GetValue(); id != "" {
		if err := validateID("framework id", id); err != nil {
			return err
		}
	}
	return nil
}
