// Any path under /api that no route serves: a JSON 404 for API clients, not the dashboard's HTML page.
import { noSuchEndpoint } from '@/server/http/route';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = noSuchEndpoint();
