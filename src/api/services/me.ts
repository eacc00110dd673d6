// GET /api/me, as the API serves it: who the caller is, and canSubmit, the same question the
// crawl routes ask (can_submit on the first organization, at HIGHER_CONSISTENCY; false with none).
import type { OpenFgaClient } from '@openfga/sdk';
import type { Static } from 'typebox';
import type { Identity } from '../../domain/identity.ts';
import { canSubmit } from '../../fga/authorize.ts';
import type { Me } from '../schemas/me.ts';

export interface MeService {
  describe(identity: Identity): Promise<Static<typeof Me>>;
}

export function createMeService(deps: { fga: OpenFgaClient }): MeService {
  return {
    async describe(identity) {
      const org = identity.organizations[0];
      const submit = org === undefined ? false : await canSubmit(deps.fga, identity, org);
      return { subject: identity.subject, organizations: identity.organizations, canSubmit: submit };
    },
  };
}
