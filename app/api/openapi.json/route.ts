import document from '@/openapi.json';
import { route, otherMethods } from '@/server/http/route';

export const dynamic = 'force-dynamic';

/** This API described as OpenAPI 3.1 (written by `npm run openapi`; the tests keep it current). */
export const GET = route({}, async () => document);

export const { POST, PUT, PATCH, DELETE } = otherMethods('GET');
