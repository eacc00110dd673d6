// GET /api/me
import Type from 'typebox';

export const Me = Type.Object({ subject: Type.String(), organizations: Type.Array(Type.String()), canSubmit: Type.Boolean() }, { additionalProperties: false });
