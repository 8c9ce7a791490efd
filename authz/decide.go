package authz

import "strings"

// Request is one authorization question.
type Request struct {
	Principal Principal
	// Host is the client address as HostAddress renders it.
	Host      string
	Operation Operation
	Resource  Resource
}

// ACLSource returns the ACLs stored for one resource.
type ACLSource func(Resource) []ACL

// Decide answers req the way Fluss's default authorizer does once the
// internal-listener and super-user checks have passed: the candidate ACLs
// are those of the same-type wildcard resource, the resource itself and its
// ancestors; with none the answer is deny; otherwise some candidate must
// ALLOW the principal (or "*"/"*"), the host (or "*") and the operation (or
// ALL; DESCRIBE is also granted by READ, WRITE, CREATE, DROP and ALTER).
// READ and WRITE do not imply each other. ignoreCase compares principal
// names and types case-insensitively.
func Decide(acls ACLSource, req Request, ignoreCase bool) bool {
	candidates := []Resource{{Type: req.Resource.Type, Name: Wildcard}}
	if req.Resource.Name != Wildcard {
		candidates = append(candidates, req.Resource)
	}
	candidates = append(candidates, req.Resource.parents()...)
	for _, r := range candidates {
		for _, a := range acls(r) {
			if a.Permission == PermAllow &&
				principalMatches(a.Principal, req.Principal, ignoreCase) &&
				(a.Host == Wildcard || a.Host == req.Host) &&
				operationGrants(a.Operation, req.Operation) {
				return true
			}
		}
	}
	return false
}

func principalMatches(acl, p Principal, ignoreCase bool) bool {
	if acl.Name == Wildcard && acl.Type == Wildcard {
		return true
	}
	return SamePrincipal(acl, p, ignoreCase)
}

// SamePrincipal compares name and type, case-insensitively if ignoreCase.
func SamePrincipal(a, b Principal, ignoreCase bool) bool {
	if ignoreCase {
		return strings.EqualFold(a.Name, b.Name) && strings.EqualFold(a.Type, b.Type)
	}
	return a == b
}

func operationGrants(granted, wanted Operation) bool {
	if granted == wanted || granted == OpAll {
		return true
	}
	if wanted == OpDescribe {
		switch granted {
		case OpRead, OpWrite, OpCreate, OpDrop, OpAlter:
			return true
		}
	}
	return false
}
